/**
 * The ring: topology shapes, the topology hash and metric placement. Pure and shared: the client
 * (discovery, owner routing) and the reference node (`/topology`, `/locate`) both build on it, and
 * it depends on nothing else in src/.
 */
export * from './topology.js';
export * from './placement.js';
export * from './xml.js';
