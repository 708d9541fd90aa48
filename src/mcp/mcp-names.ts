/** The longest name the model APIs accept (R21). */
const MAX = 64;

/**
 * M1: the names the model sees for a server's tools, in the server's order: `prefix` + the MCP name with
 * every character outside `[a-zA-Z0-9_-]` replaced by `_`, cut to 64; a name already taken gets `_2`, `_3` …
 * (cut so that the suffix fits). The calls keep using the server's own names.
 *
 * ```ts
 * toolNames(['read file', 'read_file', 'get/weather'], 'fs_'); // ['fs_read_file', 'fs_read_file_2', 'fs_get_weather']
 * ```
 */
export function toolNames(mcpNames: readonly string[], prefix = ''): string[] {
  const taken = new Set<string>();
  return mcpNames.map((mcpName) => {
    const base = `${prefix}${mcpName}`.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, MAX) || '_';
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base.slice(0, MAX - `_${n}`.length)}_${n}`;
    taken.add(name);
    return name;
  });
}
