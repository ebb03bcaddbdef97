/** The client's check of a tag query before anything is sent: a query that does not parse is a usage error showing where. */
import { parseTagQuery, TagQueryError } from '../tags/index.js';
import { UsageError } from './errors.js';
import { printable } from './render/printable.js';

export function checkTagQuery(query: string): void {
  try {
    parseTagQuery(query);
  } catch (err) {
    // Kept: the caret under the query as typed is drawn here, with the query in hand.
    if (!(err instanceof TagQueryError)) throw err;
    const shown = printable(query);
    // The caret sits under the column when the query shows as typed (no escaped characters before it).
    const caret = printable(query.slice(0, err.column - 1)).length === err.column - 1 ? `\n  ${shown}\n  ${' '.repeat(err.column - 1)}^` : `\n  ${shown}`;
    throw new UsageError(`query: ${err.message}${caret}`, 'a tag query such as and(host:web1), or(__name:cpu*,env:prod), not(region:us-east-*); see docs/commands/find.md');
  }
}
