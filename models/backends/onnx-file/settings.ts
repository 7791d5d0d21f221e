/** A critic from an ONNX file (models/remote/onnxFileCritic.ts), kept as it is. */
import { z } from 'zod';

export const settings = {
  critic: z.strictObject({ backend: z.literal('onnx-file'), path: z.string().min(1), threads: z.number().int().min(1).max(64).default(1) }),
};
