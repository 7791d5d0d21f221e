/**
 * The external trainer's contract, named once on this side: its objectives, the data formats of
 * `{data}`, and the variables a job is told (the prompt formats are browser/policies/promptFormatNames.ts's). The Python trainer reads the same names from
 * trainers/torch/webrl_torch/trainer-contract.json, generated from this module
 * (test/harness/contractFiles.ts; test/contract.test.ts fails when it is stale).
 */
export const OBJECTIVES = ['actor-sft', 'actor-webrl', 'critic', 'orm'] as const;
export type Objective = (typeof OBJECTIVES)[number];

/** `training-records` (a completions actor's records, models/train/trainingRecord.ts) or the embedded trainer's rows. */
export const DATA_FORMATS = ['training-records', 'examples'] as const;
export type DataFormat = (typeof DATA_FORMATS)[number];

export const TRAINER_VARIABLES = {
  model: 'WEBRL_TRAIN_MODEL',
  objective: 'WEBRL_TRAIN_OBJECTIVE',
  epochs: 'WEBRL_TRAIN_EPOCHS',
  batchSize: 'WEBRL_TRAIN_BATCH_SIZE',
  seed: 'WEBRL_TRAIN_SEED',
  dataFormat: 'WEBRL_TRAIN_DATA_FORMAT',
  recordSchemaVersion: 'WEBRL_TRAIN_RECORD_SCHEMA_VERSION',
  learningRate: 'WEBRL_TRAIN_LEARNING_RATE',
  gamma: 'WEBRL_TRAIN_GAMMA',
  betaLow: 'WEBRL_TRAIN_BETA_LOW',
  betaHigh: 'WEBRL_TRAIN_BETA_HIGH',
  positiveAdvantage: 'WEBRL_TRAIN_POSITIVE_ADVANTAGE',
  negativeAdvantage: 'WEBRL_TRAIN_NEGATIVE_ADVANTAGE',
  /** One of PROMPT_FORMATS (browser/policies/promptFormatNames.ts; default webrl-llama3). */
  promptFormat: 'WEBRL_TRAIN_PROMPT_FORMAT',
  /** Tokens per prompt + response; unset = the model's context (max_position_embeddings). */
  maxLength: 'WEBRL_TRAIN_MAX_LENGTH',
  /** The serving vLLM's --max-lora-rank, for jobs whose adapter vLLM loads. */
  maxLoraRank: 'WEBRL_TRAIN_MAX_LORA_RANK',
} as const;
export type TrainerVariable = keyof typeof TRAINER_VARIABLES;

/** A job's settings as the environment variables the trainer reads. */
export function trainerVariables(values: Partial<Record<TrainerVariable, string | number>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values).flatMap(([name, value]) => (value === undefined ? [] : [[TRAINER_VARIABLES[name as TrainerVariable], String(value)]])),
  );
}
