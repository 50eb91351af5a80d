import { ArbiterError } from '../model/index.js';

/** The API server's version, as far as features depend on it. */
export interface ServerVersion {
  major: number;
  minor: number;
}

/** What `/version` answers; minor may carry a suffix (`"20+"` on GKE and EKS). */
export interface VersionInfo {
  major?: string;
  minor?: string;
  gitVersion?: string;
}

export function parseServerVersion(info: VersionInfo): ServerVersion {
  // Stryker disable next-line StringLiteral: any text without digits parses to NaN, like ''
  const major = Number.parseInt(info.major ?? '', 10);
  // Stryker disable next-line StringLiteral: any text without digits parses to NaN, like ''
  const minor = Number.parseInt(info.minor ?? '', 10);
  if (Number.isInteger(major) && Number.isInteger(minor)) return { major, minor };
  // Stryker disable next-line StringLiteral: the fallback text never matches the pattern, like ''
  const fromGit = /^v(\d+)\.(\d+)/.exec(info.gitVersion ?? '');
  if (fromGit) return { major: Number(fromGit[1]), minor: Number(fromGit[2]) };
  throw new ArbiterError(
    'UNAVAILABLE',
    `the API server reports a version Arbiter cannot read: ${JSON.stringify(info)}`,
  );
}

export function isAtLeast(version: ServerVersion, major: number, minor: number): boolean {
  return version.major > major || (version.major === major && version.minor >= minor);
}

export function formatServerVersion(version: ServerVersion): string {
  return `${version.major}.${version.minor}`;
}
