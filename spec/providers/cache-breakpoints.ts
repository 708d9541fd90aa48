/** P19: every `cache_control` in a request body, as the path to the block that carries it (`['system.0', 'tools.1']`). */
export function breakpoints(body: unknown, path = ''): string[] {
  if (typeof body !== 'object' || body === null) return [];
  return Object.entries(body).flatMap(([key, value]) => (key === 'cache_control' ? [path] : breakpoints(value, path === '' ? key : `${path}.${key}`)));
}
