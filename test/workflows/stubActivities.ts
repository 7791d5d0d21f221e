/**
 * The campaign's activities as plain functions with small deterministic results (no store, no
 * browser, no models): every reference names the phase and the activity that made it, so a test can
 * tell which phase's output an input came from. Each call is recorded with its input; `hooks` lets a
 * test hold an activity at a gate, fail it, or replace it.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { CampaignActivities } from '../../activities/campaign/contract';
import type { DatasetRef, PhaseScope } from '../../storage/keys';

export interface ActivityCall {
  name: keyof CampaignActivities;
  input: PhaseScope & Record<string, unknown>;
}

/** Runs before an activity's stub result; may throw, wait, or return a result of its own. */
export type Hook = (input: PhaseScope & Record<string, unknown>, attempt: number) => Promise<unknown> | unknown;

export interface StubActivities {
  activities: CampaignActivities;
  calls: ActivityCall[];
  /** Inputs of every call of `name`, in order. */
  inputs(name: keyof CampaignActivities): (PhaseScope & Record<string, unknown>)[];
}

export const dataset = (phase: number, name: string, count: number): DatasetRef => ({
  key: `campaigns/test/phase-${phase}/${name}.jsonl`,
  count,
  sha256: `sha256-${phase}-${name}-${count}`,
});

export const model = (phase: number, role: string): string => `campaigns/test/phase-${phase}/${role}.onnx`;

/** An error no retry can fix (its type is one of the campaign's permanent error types). */
export function permanentError(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: 'StoragePermanentError', message });
}

export function stubActivities(hooks: Partial<Record<keyof CampaignActivities, Hook>> = {}): StubActivities {
  const calls: ActivityCall[] = [];
  const attempts = new Map<string, number>();

  // Input and result types come from the CampaignActivities property each stub is assigned to.
  function stub<I extends PhaseScope, R>(name: keyof CampaignActivities, result: (input: I) => R): (input: I) => Promise<R> {
    return async (input) => {
      const recorded = input as I & Record<string, unknown>;
      calls.push({ name, input: recorded });
      const attempt = (attempts.get(name) ?? 0) + 1;
      attempts.set(name, attempt);
      const hook = hooks[name];
      if (hook) {
        const replaced = await hook(recorded, attempt);
        if (replaced !== undefined) return replaced as R;
      }
      return result(input);
    };
  }

  const activities: CampaignActivities = {
    prepareEnvironment: stub('prepareEnvironment', () => ({ reset: [], checked: ['shopping'] })),
    deployModels: stub('deployModels', (input) => ({ served: { actor: { name: `actor-phase-${input.phase}`, checkpoint: input.actor } } })),
    collectDemonstrations: stub('collectDemonstrations', ({ phase }) => ({
      demonstrations: dataset(phase, 'demonstrations', 6),
      criticExamples: dataset(phase, 'critic-examples', 6),
      ormExamples: dataset(phase, 'orm-examples', 6),
    })),
    trainSft: stub('trainSft', ({ phase }) => ({
      models: { actor: model(phase, 'actor'), critic: model(phase, 'critic'), orm: model(phase, 'orm') },
      steps: 3,
    })),
    fitOrmAndCriticToProbe: stub('fitOrmAndCriticToProbe', ({ phase }) => ({
      orm: model(phase, 'orm-fitted'),
      critic: model(phase, 'critic-fitted'),
      steps: 2,
      outcomes: 4,
    })),
    generateTasks: stub('generateTasks', ({ phase, count }) => dataset(phase, 'tasks', count)),
    filterTasksByCritic: stub('filterTasksByCritic', ({ phase, candidates, limit }) => ({
      tasks: dataset(phase, 'kept-tasks', Math.min(candidates.count, limit ?? candidates.count)),
      meanValue: 0.5,
    })),
    runRolloutShard: stub('runRolloutShard', ({ phase, purpose, shard, limit }) => ({
      shard,
      trajectories: dataset(phase, `${purpose}-shard-${shard}`, limit),
      infrastructureFailures: 0,
    })),
    scoreWithOrm: stub('scoreWithOrm', ({ phase, shards }) => ({
      rewards: dataset(
        phase,
        'rewards',
        shards.reduce((sum, s) => sum + s.count, 0),
      ),
      successes: 1,
    })),
    filterExperience: stub('filterExperience', ({ phase }) => ({
      experience: dataset(phase, 'experience', 5),
      replayBuffer: dataset(phase, 'replay-buffer', 5),
      failedTasks: dataset(phase, 'failed-tasks', 2),
      replayedSteps: 1,
      currentSteps: 4,
    })),
    trainCritic: stub('trainCritic', ({ phase }) => ({ critic: model(phase, 'critic'), steps: 2 })),
    trainActor: stub('trainActor', ({ phase }) => ({ actor: model(phase, 'actor'), steps: 2 })),
    evaluationTasks: stub('evaluationTasks', ({ phase }) => dataset(phase, 'test-tasks', 2)),
    summarizeEvaluation: stub('summarizeEvaluation', ({ phase }) => ({
      evaluation: `campaigns/test/phase-${phase}/evaluation.json`,
      successRate: 0.5,
      perSite: { shopping: 0.5 },
    })),
    publishPhase: stub('publishPhase', ({ phase, numbers }) => {
      const manifestKey = `campaigns/test/phase-${phase}/manifest.json`;
      return { manifestKey, summary: { ...numbers, phase, manifestKey } };
    }),
  };

  return { activities, calls, inputs: (name) => calls.filter((call) => call.name === name).map((call) => call.input) };
}
