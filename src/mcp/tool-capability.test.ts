import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CAPABILITY_NAME_MAX_LENGTH, CAPABILITY_NAME_PATTERN } from '../model/index.js';
import { capabilityForTool, toolForCapability } from './tool-capability.js';

/** Tool names as the MCP specification allows them: 1-128 of [A-Za-z0-9_.-]. */
const toolName = fc.stringMatching(/^[A-Za-z0-9_.-]{1,40}$/);

describe('the capability of an MCP tool', () => {
  it.each([
    ['get_weather', 'mcp.files.get_weather'],
    ['get-weather', 'mcp.files.get--weather'],
    ['getWeather', 'mcp.files.get-weather'],
    ['files.read', 'mcp.files.files-0read'],
    ['2fa', 'mcp.files.x-22fa'],
    ['_private', 'mcp.files.x-2_private'],
    ['Read', 'mcp.files.x-2-read'],
    ['x-2', 'mcp.files.x--2'],
  ])('%s is %s', (tool, capability) => {
    expect(capabilityForTool('files', tool)).toBe(capability);
    expect(toolForCapability('files', capability)).toBe(tool);
  });

  it('is a valid capability name, different for every two tools, and maps back', () => {
    const pattern = new RegExp(CAPABILITY_NAME_PATTERN);
    fc.assert(
      fc.property(toolName, toolName, (a, b) => {
        const ca = capabilityForTool('srv', a)!;
        expect(ca).toMatch(pattern);
        expect(toolForCapability('srv', ca)).toBe(a);
        if (a !== b) expect(capabilityForTool('srv', b)).not.toBe(ca);
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps characters outside the spec apart too', () => {
    expect(capabilityForTool('srv', 'a b')).toBe('mcp.srv.a-120-b');
    expect(toolForCapability('srv', 'mcp.srv.a-120-b')).toBe('a b');
    expect(capabilityForTool('srv', 'a/b')).not.toBe(capabilityForTool('srv', 'a b'));
  });

  it('has none for a name too long for a capability, or an invalid server name', () => {
    expect(capabilityForTool('srv', 'a'.repeat(CAPABILITY_NAME_MAX_LENGTH))).toBeUndefined();
    expect(capabilityForTool('Srv', 'read')).toBeUndefined();
    expect(capabilityForTool('a.b', 'read')).toBeUndefined();
    expect(capabilityForTool('srv', '')).toBeUndefined();
  });

  it('maps back nothing that is not the encoding of a tool of that server', () => {
    for (const capability of [
      'mcp.other.read',
      'mcp.srv.a-',
      'mcp.srv.a-2b',
      'mcp.srv.a-1zz',
      'mcp.srv.x-2read',
      'database.query',
    ])
      expect(toolForCapability('srv', capability), capability).toBeUndefined();
  });
});
