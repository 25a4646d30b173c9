/**
 * The `SERVICE_*` environment variables: the second of the sources, read by loadConfig; here, the check that
 * finds the ones that name no setting.
 */
import { DATA_FOLDER_SETTING, SETTINGS } from './settings.js';

/**
 * `SERVICE_*` variables that name no setting, each with the setting it most likely meant: a misspelt
 * variable would otherwise be without effect, and nothing would say so.
 */
export function unknownSettingVariables(env: Readonly<Record<string, string | undefined>>): { name: string; meant: string | undefined }[] {
  const known = [DATA_FOLDER_SETTING.env, ...SETTINGS.map((s) => s.env)];
  return Object.keys(env)
    .filter((name) => name.startsWith('SERVICE_') && !known.includes(name))
    .sort()
    .map((name) => {
      const [closest] = known.map((candidate) => ({ candidate, distance: editDistance(name, candidate) })).sort((a, b) => a.distance - b.distance);
      return { name, meant: closest && closest.distance <= 3 ? closest.candidate : undefined };
    });
}

/** Levenshtein distance (short names only). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}
