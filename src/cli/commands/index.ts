import type { Command } from 'commander';
import type { Runner } from '../action.js';
import { declareCluster } from './cluster/command.js';
import { declareCompletion } from './completion/command.js';
import { declareDelete } from './delete/command.js';
import { declareDemo } from './demo/command.js';
import { declareFind } from './find/command.js';
import { declareHistory } from './history/command.js';
import { declareLocate } from './locate/command.js';
import { declareNodes } from './nodes/command.js';
import { declareProfile } from './profile/command.js';
import { declareRead } from './read/command.js';
import { declareRetention } from './retention/command.js';
import { serveCommand } from './serve/command.js';
import { declareStatus } from './status/command.js';
import { declareSweep } from './sweep/command.js';
import { declareWrite } from './write/command.js';

/** Every command's declaration, in help order. Each declaration lazy-loads its action. */
export const commands: Array<(program: Command, runner: Runner) => void> = [
  serveCommand,
  declareWrite,
  declareRead,
  declareSweep,
  declareRetention,
  declareFind,
  declareDelete,
  declareStatus,
  declareHistory,
  declareNodes,
  declareLocate,
  declareCluster,
  declareDemo,
  declareProfile,
  declareCompletion,
];
