/** A node's replication lag as a table cell: `0s`, `12.5s`, `-` when it reports none. */
export function lagText(lag: number | null | undefined): string {
  return lag === null || lag === undefined ? '-' : `${Math.round(lag * 10) / 10}s`;
}
