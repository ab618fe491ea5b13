// The model servers found on loopback (SystemAPI.localModels) for the
// settings page's "Local models" section, and the profile text for one of
// their models. Profiles are TOML files (docs/PROFILES.md); the UI does not
// write them, so it offers the text to copy.
import { toApiError, type Api, type ApiError, type LocalServer } from '../api';

/**
 * A profile name for model: lower case letters, digits, '.', '_' and '-',
 * starting with a letter or digit, at most 64 characters (backend/profile).
 */
export function profileName(model: string): string {
  const name = model
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+|[._-]+$/g, '')
    .slice(0, 64)
    .replace(/[._-]+$/, '');
  return name === '' || name === 'demo' ? 'local' : name;
}

/** The file to save that profile as, in the profiles folder. */
export function profileFileName(model: string): string {
  return `${profileName(model)}.toml`;
}

/** The native profile that uses model on server, as TOML. */
export function profileToml(server: LocalServer, model: string): string {
  const q = (s: string) => JSON.stringify(s); // a TOML basic string is a JSON string here
  return [
    `name = ${q(profileName(model))}`,
    'runtime = "native"',
    'provider = "openai"',
    `base_url = ${q(server.baseUrl)}`,
    `model = ${q(model)}`,
    '',
  ].join('\n');
}

export class LocalModelsState {
  servers = $state<LocalServer[]>([]);
  status = $state<'idle' | 'loading' | 'ready' | 'error'>('idle');
  error = $state<ApiError | null>(null);

  #api: Pick<Api, 'system'>;
  #loading: Promise<void> | null = null;

  constructor(api: Pick<Api, 'system'>) {
    this.#api = api;
  }

  /** Probes again; concurrent calls share one request. */
  load(): Promise<void> {
    this.#loading ??= this.#load().finally(() => (this.#loading = null));
    return this.#loading;
  }

  async #load(): Promise<void> {
    this.status = 'loading';
    try {
      this.servers = await this.#api.system.localModels();
      this.error = null;
      this.status = 'ready';
    } catch (err) {
      this.error = toApiError(err);
      this.status = 'error';
    }
  }
}
