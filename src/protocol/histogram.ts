/**
 * The store's histogram encoding (Circonus log-linear histograms, "circllhist"), as its write
 * endpoint takes it in base64 and its read endpoint answers it: a map of bins to counts.
 *
 * Bytes: a big-endian uint16 bin count, then per bin `val` (int8), `exp` (int8), `n` (uint8),
 * and the count in `n + 1` bytes, least significant first. A bin holds the values from
 * `val/10 * 10^exp` on; `val` is 0 (the zero bin) or 10..99 in magnitude. Read answers name a
 * bin as the store prints it: `"0"`, or sign, two digits, `e`, sign, three digits of `exp - 1`
 * (`+23e-004` is 2.3e-3), which is how the store's Go client's fixtures spell them.
 */

/** A decoded histogram: bin name to count, bins in the order the encoding lists them. */
export type HistogramBins = Record<string, number>;

export type DecodedHistogram = { ok: true; bins: HistogramBins } | { ok: false; reason: string };

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function validBin(val: number): boolean {
  return val === 0 || (Math.abs(val) >= 10 && Math.abs(val) <= 99);
}

/** The store's name of a bin (`"0"`, `"+23e-004"`). */
export function histogramBinName(val: number, exp: number): string {
  if (val === 0) return '0';
  const printedExp = Math.abs(exp - 1);
  return `${val >= 0 ? '+' : '-'}${String(Math.abs(val)).padStart(2, '0')}e${exp >= 1 ? '+' : '-'}${String(printedExp).padStart(3, '0')}`;
}

/**
 * Decodes a base64 histogram into its bins. Bins listed twice add up; bins with a count of 0
 * are left out (the store drops them too). Anything that is not a whole encoding (truncated,
 * trailing bytes, a bin value outside the encoding's range, a count over 2^53) is refused with
 * the reason.
 */
export function decodeHistogram(b64: string): DecodedHistogram {
  if (b64.length % 4 !== 0 || !BASE64.test(b64)) return { ok: false, reason: 'is not base64' };
  const bytes = Buffer.from(b64, 'base64');
  if (bytes.length < 2) return { ok: false, reason: `holds ${bytes.length} byte(s); a histogram starts with a 2-byte bin count` };
  const nbins = bytes.readUInt16BE(0);
  const bins: HistogramBins = {};
  let at = 2;
  for (let i = 0; i < nbins; i++) {
    if (at + 3 > bytes.length) return { ok: false, reason: `ends inside bin ${i + 1} of ${nbins}` };
    const val = bytes.readInt8(at);
    const exp = bytes.readInt8(at + 1);
    const width = bytes[at + 2]! + 1;
    if (width > 8) return { ok: false, reason: `bin ${i + 1} has a ${width}-byte count (at most 8)` };
    if (at + 3 + width > bytes.length) return { ok: false, reason: `ends inside bin ${i + 1} of ${nbins}` };
    let count = 0;
    for (let b = width - 1; b >= 0; b--) count = count * 256 + bytes[at + 3 + b]!;
    if (!Number.isSafeInteger(count)) return { ok: false, reason: `bin ${i + 1} has a count over 2^53` };
    if (!validBin(val)) return { ok: false, reason: `bin ${i + 1} has value ${val} (0, or 10 to 99 in magnitude)` };
    at += 3 + width;
    if (count === 0) continue;
    const name = histogramBinName(val, exp);
    const sum = (bins[name] ?? 0) + count;
    if (!Number.isSafeInteger(sum)) return { ok: false, reason: `bin ${name} adds up to over 2^53` };
    bins[name] = sum;
  }
  if (at !== bytes.length) return { ok: false, reason: `has ${bytes.length - at} byte(s) after its ${nbins} bin(s)` };
  return { ok: true, bins };
}

const BIN_NAME = /^([+-])(\d\d)e([+-])(\d\d\d)$/;

/**
 * Encodes bins (named as {@link histogramBinName} names them) into the store's base64 form:
 * what a writer of histograms sends. Throws a RangeError naming a bin it cannot encode.
 */
export function encodeHistogram(bins: Readonly<HistogramBins>): string {
  const parts: Buffer[] = [];
  for (const [name, count] of Object.entries(bins)) {
    if (!Number.isSafeInteger(count) || count < 0) throw new RangeError(`histogram bin ${name}: count ${count} is not a whole number >= 0`);
    let val = 0;
    let exp = 0;
    if (name !== '0') {
      const m = BIN_NAME.exec(name);
      if (!m) throw new RangeError(`histogram bin ${JSON.stringify(name)}: expected "0" or a name like "+23e-004"`);
      val = (m[1] === '-' ? -1 : 1) * Number(m[2]);
      exp = (m[3] === '-' ? -1 : 1) * Number(m[4]) + 1;
      if (!validBin(val) || exp < -128 || exp > 127) throw new RangeError(`histogram bin ${name}: outside the encoding's range`);
    }
    const countBytes: number[] = [];
    let rest = count;
    do {
      countBytes.push(rest % 256);
      rest = Math.floor(rest / 256);
    } while (rest > 0);
    const bin = Buffer.alloc(3 + countBytes.length);
    bin.writeInt8(val, 0);
    bin.writeInt8(exp, 1);
    bin[2] = countBytes.length - 1;
    countBytes.forEach((b, i) => (bin[3 + i] = b));
    parts.push(bin);
  }
  if (parts.length > 0xffff) throw new RangeError(`a histogram holds at most 65535 bins (got ${parts.length})`);
  const head = Buffer.alloc(2);
  head.writeUInt16BE(parts.length, 0);
  return Buffer.concat([head, ...parts]).toString('base64');
}
