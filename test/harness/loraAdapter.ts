/**
 * A PEFT LoRA adapter directory for a Hugging Face Llama checkpoint, written without Python: small
 * seeded random lora_A / lora_B matrices for q_proj and v_proj of every layer, in safetensors, with
 * PEFT's adapter_config.json. What the serving tests load into real vLLM, at any rank.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SeededRng } from '../../browser/rng';

interface LlamaShape {
  hidden_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  num_key_value_heads?: number;
  head_dim?: number;
}

/** safetensors: 8-byte little-endian header length, the JSON header, then the raw little-endian data. */
function safetensors(tensors: Record<string, { shape: number[]; data: Float32Array }>): Buffer {
  const header: Record<string, unknown> = {};
  let offset = 0;
  for (const [name, tensor] of Object.entries(tensors)) {
    header[name] = { dtype: 'F32', shape: tensor.shape, data_offsets: [offset, offset + tensor.data.byteLength] };
    offset += tensor.data.byteLength;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const size = Buffer.alloc(8);
  size.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([
    size,
    Buffer.from(json),
    ...Object.values(tensors).map((tensor) => Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength)),
  ]);
}

export async function writeLoraAdapter(
  dir: string,
  options: { baseModel: string; rank: number; seed: number; extraConfig?: Record<string, unknown> },
): Promise<string> {
  const config = JSON.parse(await readFile(join(options.baseModel, 'config.json'), 'utf8')) as LlamaShape;
  const headDim = config.head_dim ?? config.hidden_size / config.num_attention_heads;
  const outputs = { q_proj: config.num_attention_heads * headDim, v_proj: (config.num_key_value_heads ?? config.num_attention_heads) * headDim };
  const rng = new SeededRng(options.seed);
  const random = (length: number) => Float32Array.from({ length }, () => (rng.next() - 0.5) * 0.2);
  const tensors: Record<string, { shape: number[]; data: Float32Array }> = {};
  for (let layer = 0; layer < config.num_hidden_layers; layer++) {
    for (const [module, out] of Object.entries(outputs)) {
      const prefix = `base_model.model.model.layers.${layer}.self_attn.${module}`;
      tensors[`${prefix}.lora_A.weight`] = { shape: [options.rank, config.hidden_size], data: random(options.rank * config.hidden_size) };
      tensors[`${prefix}.lora_B.weight`] = { shape: [out, options.rank], data: random(out * options.rank) };
    }
  }
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'adapter_model.safetensors'), safetensors(tensors));
  await writeFile(
    join(dir, 'adapter_config.json'),
    JSON.stringify({
      peft_type: 'LORA',
      task_type: 'CAUSAL_LM',
      base_model_name_or_path: options.baseModel,
      r: options.rank,
      lora_alpha: 2 * options.rank,
      lora_dropout: 0,
      target_modules: Object.keys(outputs),
      bias: 'none',
      use_dora: false,
      modules_to_save: null,
      fan_in_fan_out: false,
      ...options.extraConfig,
    }),
  );
  return dir;
}
