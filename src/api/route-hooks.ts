/** Route-level hooks, added from `onRoute`: a route's own hooks run only for that route. */

/** `hook` first, then the route's own hooks of that stage (undefined, one, or a list). */
export function prependRouteHook<T>(hooks: T | T[] | undefined, hook: T): T[] {
  return [hook, ...(hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks])];
}
