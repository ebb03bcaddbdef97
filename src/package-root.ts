import { fileURLToPath } from 'node:url';

/**
 * The package's root directory (where package.json and bin/ are). This module sits one level below
 * it in src/ (tests), dist/ (the ESM build) and, inlined, in dist/tsnode.cjs (the CLI bundle,
 * scripts/build-bundle.mjs): the one place that knows the distance, so paths hold in all three.
 */
export const PACKAGE_ROOT: string = fileURLToPath(new URL('..', import.meta.url));
