import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../../src/cli/args.js';

describe('parseArgs', () => {
  it('separates command words, switches and config flags with their values', () => {
    const parsed = parseArgs(['user', 'add', 'alice', '--admin', '--data-folder', '/srv/wcs', '--port=1'], ['--admin']);
    expect(parsed.words).toEqual(['user', 'add', 'alice']);
    expect([...parsed.switches]).toEqual(['--admin']);
    expect(parsed.configFlags).toEqual(['--data-folder', '/srv/wcs', '--port=1']);
  });

  it('lets --api-active stand alone', () => {
    expect(parseArgs(['serve', '--api-active', 'extra'], []).configFlags).toEqual(['--api-active']);
    expect(parseArgs(['serve', '--api-active', 'extra'], []).words).toEqual(['serve', 'extra']);
  });

  it('keeps a flag without value for the config loader to refuse', () => {
    expect(parseArgs(['serve', '--port'], []).configFlags).toEqual(['--port']);
    expect(parseArgs(['serve', '--port', '--host', 'x'], []).configFlags).toEqual(['--port', '--host', 'x']);
  });
});
