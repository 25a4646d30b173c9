import { describe, expect, it } from 'vitest';
import { RouteTable } from '../../../src/api/route-table.js';

describe('RouteTable', () => {
  const table = new RouteTable();
  table.add('/api/v1alpha/token', ['GET', 'HEAD']);
  table.add('/api/v1alpha/token', ['POST']);
  table.add('/api/v1alpha/token/:jwt_token_id', ['GET', 'DELETE']);
  table.add('/docs/api/static/*', ['GET']);

  it('lists the methods of the path that matches, sorted', () => {
    expect(table.methodsFor('/api/v1alpha/token')).toEqual(['GET', 'HEAD', 'POST']);
    expect(table.methodsFor('/api/v1alpha/token/abc')).toEqual(['DELETE', 'GET']);
    expect(table.methodsFor('/docs/api/static/a/b.js')).toEqual(['GET']);
  });

  it('ignores trailing slashes and query strings', () => {
    expect(table.methodsFor('/api/v1alpha/token/?x=1')).toEqual(['GET', 'HEAD', 'POST']);
    expect(table.methodsFor('/api/v1alpha/token/abc/')).toEqual(['DELETE', 'GET']);
  });

  it('matches nothing for unknown paths, deeper paths and look-alike characters', () => {
    expect(table.methodsFor('/api/v1alpha/tokens')).toEqual([]);
    expect(table.methodsFor('/api/v1alpha/token/a/b')).toEqual([]);
    expect(table.methodsFor('/apixv1alpha/token')).toEqual([]);
    expect(table.methodsFor('/')).toEqual([]);
  });
});
