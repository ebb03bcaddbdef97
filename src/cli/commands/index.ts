import type { Command } from 'commander';
import type { Runner } from '../action.js';
import { serveCommand } from './serve/command.js';
import { declareWrite } from './write/command.js';

/** Every command's declaration, in help order. Each declaration lazy-loads its action. */
export const commands: Array<(program: Command, runner: Runner) => void> = [serveCommand, declareWrite];
