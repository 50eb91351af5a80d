import {
  CAPABILITY_NAME_PATTERN,
  CAPABILITY_NAME_MAX_LENGTH,
  MCP_SERVER_NAME_PATTERN,
} from '../model/index.js';

/**
 * The capability an MCP tool call is proposed as: `mcp.<server>.<tool>`, with the tool's
 * name written in the capability alphabet ([a-z0-9_-], starting with a letter) so that two
 * tool names never share a capability:
 *
 *   a-z 0-9 _   kept                     get_weather  -> get_weather
 *   -           doubled                  get-weather  -> get--weather
 *   A-Z         '-' and the lower case   getWeather   -> get-weather
 *   .           -0                       files.read   -> files-0read
 *   other       -1<hex code point>-      (tool names are [A-Za-z0-9_.-] by the spec; kept safe)
 *
 * and `x-2` before a name that would not start with a letter (2fa -> x-22fa). Each escape
 * starts with '-' and is decoded left to right, so the mapping is one to one.
 */
export function capabilityForTool(server: string, tool: string): string | undefined {
  if (!SERVER_NAME.test(server) || tool.length === 0) return undefined;
  let encoded = '';
  for (const char of tool) encoded += encodeChar(char);
  if (!/^[a-z]/.test(encoded)) encoded = `x-2${encoded}`;
  const capability = `mcp.${server}.${encoded}`;
  const valid = capability.length <= CAPABILITY_NAME_MAX_LENGTH && CAPABILITY_PATTERN.test(capability);
  return valid ? capability : undefined;
}

/** The tool a capability of `server` stands for: the inverse of capabilityForTool. */
export function toolForCapability(server: string, capability: string): string | undefined {
  const prefix = `mcp.${server}.`;
  if (!capability.startsWith(prefix)) return undefined;
  let rest = capability.slice(prefix.length);
  if (rest.startsWith('x-2')) rest = rest.slice(3);
  let tool = '';
  for (let i = 0; i < rest.length; i++) {
    const char = rest[i]!;
    if (char !== '-') {
      tool += char;
      continue;
    }
    const next = rest[++i];
    if (next === '-') tool += '-';
    else if (next === '0') tool += '.';
    else if (next === '1') {
      const end = rest.indexOf('-', i + 1);
      if (end < 0) return undefined;
      tool += String.fromCodePoint(Number.parseInt(rest.slice(i + 1, end), 16));
      i = end;
    } else if (next !== undefined && /[a-z]/.test(next)) tool += next.toUpperCase();
    else return undefined;
  }
  return capabilityForTool(server, tool) === capability ? tool : undefined;
}

/** A server name is one capability segment, so that it cannot run into the tool's. */
export const SERVER_NAME = new RegExp(MCP_SERVER_NAME_PATTERN);

const CAPABILITY_PATTERN = new RegExp(CAPABILITY_NAME_PATTERN);

function encodeChar(char: string): string {
  if (/[a-z0-9_]/.test(char)) return char;
  if (char === '-') return '--';
  if (/[A-Z]/.test(char)) return `-${char.toLowerCase()}`;
  if (char === '.') return '-0';
  return `-1${char.codePointAt(0)!.toString(16)}-`;
}
