/** A critic from an ONNX file: one session per file and worker, as the model cache keeps one per embedded checkpoint. */
import { loadOnnxFileCritic } from '../../remote/onnxFileCritic';
import type { ModelBackend } from '../contract';
import { batchedCritic } from '../remoteCalls';
import { settings } from './settings';

export const backend: ModelBackend<typeof settings> = {
  name: 'onnx-file',
  settings,
  roles: {
    critic: ({ path, threads }, { shared, heartbeats }) =>
      batchedCritic(
        () => {
          const sessions = shared('onnx-file-critics', () => new Map<string, ReturnType<typeof loadOnnxFileCritic>>());
          let loaded = sessions.get(path);
          if (!loaded) {
            loaded = loadOnnxFileCritic(path, threads);
            sessions.set(path, loaded);
            loaded.catch(() => sessions.delete(path));
          }
          return loaded;
        },
        256,
        heartbeats,
      ),
  },
};
