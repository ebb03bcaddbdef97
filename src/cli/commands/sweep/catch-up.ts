// The catch-up is the run core's (src/run/catch-up.ts); commands and history import it from here.
export * from '../../../run/catch-up.js';
