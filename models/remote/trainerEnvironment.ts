/**
 * What an external trainer is told of its objective, as environment variables (the command template
 * holds only paths): the learning rate (configured, else WebRL's), the discount and the WebRL
 * objective's constants, the same numbers the embedded trainer uses.
 */
import type { Config } from '../../config/schema';
import { NEGATIVE_ADVANTAGE, POSITIVE_ADVANTAGE, WEBRL_BETA } from '../train/objectives';
import { trainerVariables, type Objective } from '../train/trainerContract';

/** WebRL's repository trains its LLM actor and critic at 1e-6; the embedded trainer's defaults are for its small ONNX models. */
export const EXTERNAL_DEFAULT_LEARNING_RATE = 1e-6;

export function objectiveEnvironment(objective: Objective, training: Config['campaign']['training']): Record<string, string> {
  return trainerVariables({
    learningRate: training.learningRates[objective] ?? EXTERNAL_DEFAULT_LEARNING_RATE,
    gamma: training.gamma,
    betaLow: WEBRL_BETA.low,
    betaHigh: WEBRL_BETA.high,
    positiveAdvantage: POSITIVE_ADVANTAGE,
    negativeAdvantage: NEGATIVE_ADVANTAGE,
  });
}
