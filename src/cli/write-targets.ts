/** Where `tsnode write` sends records (`--to`, the profile's `write_to`): see commands/write/route.ts. */
export const WRITE_TARGETS = ['primary', 'owners', 'any', 'all'] as const;
export type WriteTarget = (typeof WRITE_TARGETS)[number];
