import { useCallback, useEffect, useState } from 'preact/hooks';
import type { JobConfig } from '../../../src/client/jobs';
import { api, customerPath } from '../../lib/api';

export interface JobConfigList {
  /** Oldest first, as the API lists them; undefined while loading. */
  configs: JobConfig[] | undefined;
  error: unknown;
  reload: () => Promise<void>;
  /** Puts a created or changed configuration in the list (a new one last). */
  put: (config: JobConfig) => void;
  remove: (id: string) => void;
}

/** The customer's job configurations: the API lists them all in one answer (docs/jobs-and-assets.md). */
export function useJobConfigs(): JobConfigList {
  const [configs, setConfigs] = useState<JobConfig[]>();
  const [error, setError] = useState<unknown>();
  const reload = useCallback(async () => {
    try {
      setConfigs((await api.get<{ items: JobConfig[] }>(customerPath('/job-configs'))).items);
      setError(undefined);
    } catch (failure) {
      setError(failure);
    }
  }, []);
  useEffect(() => void reload(), [reload]);
  const put = useCallback(
    (config: JobConfig) =>
      setConfigs((list = []) =>
        list.some((c) => c.job_config_id === config.job_config_id) ? list.map((c) => (c.job_config_id === config.job_config_id ? config : c)) : [...list, config],
      ),
    [],
  );
  const remove = useCallback((id: string) => setConfigs((list) => list?.filter((c) => c.job_config_id !== id)), []);
  return { configs, error, reload, put, remove };
}
