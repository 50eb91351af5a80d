import { ApisApi, CoreV1Api, CustomObjectsApi, VersionApi, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ApiResourceList } from '../admission/governed-rules.js';
import { parseServerVersion, type ServerVersion } from '../admission/server-version.js';
import { toArbiterError } from './kube-errors.js';
import { withTimeout } from './with-timeout.js';

/**
 * What the API server says about itself: its version and the resources of every
 * group-version (`/api/v1` and `/apis/<group>/<version>`). A group-version that fails to
 * answer (an aggregated API whose backend is down) keeps the resources it last listed, so
 * a blip does not drop its resources from the governance webhook's rules and add them back.
 */
export class ApiDiscovery {
  private readonly core: CoreV1Api;
  private readonly apis: ApisApi;
  private readonly groups: CustomObjectsApi;
  private readonly versionApi: VersionApi;
  private lastListed = new Map<string, ApiResourceList>();

  constructor(
    kubeConfig: KubeConfig,
    private readonly timeoutMs: number,
    private readonly logger: Logger,
  ) {
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.apis = kubeConfig.makeApiClient(ApisApi);
    this.groups = kubeConfig.makeApiClient(CustomObjectsApi);
    this.versionApi = kubeConfig.makeApiClient(VersionApi);
  }

  async serverVersion(): Promise<ServerVersion> {
    return parseServerVersion(await this.bounded(this.versionApi.getCode(), 'read the server version'));
  }

  /** Core and group lists must answer; a single failing group-version is logged and kept as last seen. */
  async resourceLists(): Promise<ApiResourceList[]> {
    const [core, groupList] = await Promise.all([
      this.bounded(this.core.getAPIResources(), 'discover the core API'),
      this.bounded(this.apis.getAPIVersions(), 'discover the API groups'),
    ]);
    const groupVersions = groupList.groups.flatMap((group) =>
      group.versions.map((version) => ({ group: group.name, version: version.version })),
    );
    const lists = await Promise.all(
      groupVersions.map(({ group, version }) => this.groupVersion(group, version)),
    );
    const found = lists.filter((list): list is ApiResourceList => list !== undefined);
    this.lastListed = new Map(found.map((list) => [list.groupVersion, list]));
    return [{ groupVersion: core.groupVersion, resources: core.resources }, ...found];
  }

  private async groupVersion(group: string, version: string): Promise<ApiResourceList | undefined> {
    const groupVersion = `${group}/${version}`;
    try {
      const list = await this.bounded(
        this.groups.getAPIResources({ group, version }),
        `discover ${groupVersion}`,
      );
      return { groupVersion, resources: list.resources };
    } catch (err) {
      const kept = this.lastListed.get(groupVersion);
      this.logger.warn(
        { err, group_version: groupVersion, kept_last_seen: kept !== undefined },
        'API discovery failed for one group-version',
      );
      return kept;
    }
  }

  private async bounded<T>(request: Promise<T>, doing: string): Promise<T> {
    try {
      return await withTimeout(request, this.timeoutMs, 'the API server');
    } catch (err) {
      throw toArbiterError(err, doing);
    }
  }
}
