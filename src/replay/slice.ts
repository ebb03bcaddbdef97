/**
 * Part of a batch on its way to one node, cut down as the node answers: without the records it
 * refused (400), or halved when the body was too large for it (413).
 */
import { batchBody, batchTexts } from '../records/batch.js';

/** Part of a batch on its way to one node: the body, and its texts once a refusal made them necessary. */
export interface Slice {
  body: Buffer;
  count: number;
  records: number[];
  lines: number[];
  texts?: string[];
}

export function textsOf(s: Slice): string[] {
  s.texts ??= batchTexts(s.body);
  return s.texts;
}

function sliceOf(texts: string[], records: number[], lines: number[]): Slice {
  return { body: batchBody(texts), count: texts.length, records, lines, texts };
}

/** The slice without the records numbered in `gone`. */
export function excluding(s: Slice, gone: ReadonlySet<number>): Slice {
  const keep = s.records.flatMap((r, k) => (gone.has(r) ? [] : [k]));
  const t = textsOf(s);
  return sliceOf(
    keep.map((k) => t[k]!),
    keep.map((k) => s.records[k]!),
    keep.map((k) => s.lines[k]!),
  );
}

export function half(s: Slice, from: number, to: number): Slice {
  return sliceOf(textsOf(s).slice(from, to), s.records.slice(from, to), s.lines.slice(from, to));
}
