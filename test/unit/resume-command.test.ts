import { describe, expect, it } from 'vitest';
import { resumeCommand } from '../../src/cli/commands/write/action.js';

describe('the "to continue" command repeats no secret', () => {
  it('replaces every header value with a placeholder naming the header', () => {
    const { command, headers } = resumeCommand(['write', 'r.ndjson', '--header', 'Authorization: Bearer s3cr3t-t0ken', '--header=X-Tenant: blue', '--node', 'http://db1:8112']);
    expect(command).toBe("tsnode write r.ndjson --header 'Authorization: <Authorization value>' '--header=X-Tenant: <X-Tenant value>' --node http://db1:8112 --resume");
    expect(command).not.toContain('s3cr3t');
    expect(headers).toEqual(['Authorization', 'X-Tenant']);
  });

  it('hides credentials in URLs and keeps --resume once', () => {
    const { command, headers } = resumeCommand(['write', '-', '--nodes', 'https://u:pw@db1:8112,db2', '--resume']);
    expect(command).toBe("tsnode write - --nodes 'https://[redacted]@db1:8112,db2' --resume");
    expect(headers).toEqual([]);
  });
});
