/** Why the store cannot open (bad data dir, locked, made with other rollups, a damaged log): a startup error. */
export class StoreOpenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreOpenError';
  }
}
