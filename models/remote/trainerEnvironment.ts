/**
 * What an external trainer is told of its objective, as environment variables (the command template
 * holds only paths): the learning rate when configured (unset, the trainer picks its own per objective:
 * webrl-torch's depend on LoRA or full fine-tuning, docs/torch-trainer.md), the discount and the WebRL
 * objective's constants, the same numbers the embedded trainer uses.
 */
import { NEGATIVE_ADVANTAGE, POSITIVE_ADVANTAGE, WEBRL_BETA } from '../train/objectives';
import { trainerVariables, type Objective } from '../train/trainerContract';

/** What it reads of `campaign.training`. */
export interface ObjectiveTraining {
  learningRates: Partial<Record<Objective, number>>;
  gamma: number;
}

export function objectiveEnvironment(objective: Objective, training: ObjectiveTraining): Record<string, string> {
  return trainerVariables({
    learningRate: training.learningRates[objective],
    gamma: training.gamma,
    betaLow: WEBRL_BETA.low,
    betaHigh: WEBRL_BETA.high,
    positiveAdvantage: POSITIVE_ADVANTAGE,
    negativeAdvantage: NEGATIVE_ADVANTAGE,
  });
}
