/**
 * The keys a config file may hold: import-free, so a command's flag table (`profile set --unset`)
 * can offer them at start-up without loading the config reader.
 */
export const TOP_KEYS = ['current', 'profiles'] as const;
export const PROFILE_KEYS = [
  'nodes',
  'nodes_file',
  'seed',
  'header_prefix',
  'cacert',
  'cert',
  'key',
  'headers',
  'smallest_span',
  'nnt_rollups',
  'histogram_rollups',
  'write_to',
  'allow_lag',
  'skip_unreachable',
] as const;
export type ProfileKey = (typeof PROFILE_KEYS)[number];
