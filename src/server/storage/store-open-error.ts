import { TsnodeError } from '../../tsnode-error.js';

/** Why the store cannot open (bad data dir, locked, made with other rollups, a damaged log): a startup error. */
export class StoreOpenError extends TsnodeError {
  declare readonly code: 'store_open_failed';
  constructor(message: string) {
    super('store_open_failed', message);
    this.name = 'StoreOpenError';
  }
}
