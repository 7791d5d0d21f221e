/**
 * What an external trainer is told of its objective, as environment variables (the command template
 * holds only paths): the learning rate (configured, else WebRL's), the discount and the WebRL
 * objective's constants, the same numbers the embedded trainer uses.
 */
import type { Config } from '../../config/schema';
import { NEGATIVE_ADVANTAGE, POSITIVE_ADVANTAGE, WEBRL_BETA } from '../train/objectives';
import type { Objective } from '../train/examples';

/** WebRL's repository trains its LLM actor and critic at 1e-6; the embedded trainer's defaults are for its small ONNX models. */
export const EXTERNAL_DEFAULT_LEARNING_RATE = 1e-6;

export function objectiveEnvironment(objective: Objective, training: Config['campaign']['training']): Record<string, string> {
  return {
    WEBRL_TRAIN_LEARNING_RATE: String(training.learningRates[objective] ?? EXTERNAL_DEFAULT_LEARNING_RATE),
    WEBRL_TRAIN_GAMMA: String(training.gamma),
    WEBRL_TRAIN_BETA_LOW: String(WEBRL_BETA.low),
    WEBRL_TRAIN_BETA_HIGH: String(WEBRL_BETA.high),
    WEBRL_TRAIN_POSITIVE_ADVANTAGE: String(POSITIVE_ADVANTAGE),
    WEBRL_TRAIN_NEGATIVE_ADVANTAGE: String(NEGATIVE_ADVANTAGE),
  };
}
