/**
 * The ledger of the campaign workflow's patches (`patched(id)` in workflows/campaign.ts): why each
 * exists and which recorded histories (test/fixtures/histories) replay its old branch, i.e. were recorded
 * by a workflow without it. A patch's lifecycle, as Temporal's patching samples lay it out:
 *
 *   patched     the new code runs in new executions; an execution that ran the old code replays it
 *   deprecated  `deprecatePatch(id)` once no running execution started before the patch (each run is one
 *               phase, so: every campaign has continued past a phase boundary under the patched worker,
 *               or finished); the old branch goes, and the fixtures listed here with it
 *   removed     the call goes once no running execution has the deprecation marker unreplayed
 *
 * test/patches.test.ts checks the ledger against the workflow code and the fixtures; docs/durability.md
 * says how an operator upgrades workers under running campaigns.
 */
export interface PatchEntry {
  id: string;
  why: string;
  /** Recorded histories without the patch's marker: they pin the old branch until it is retired. */
  oldBranchFixtures: string[];
}

export const CAMPAIGN_PATCHES: readonly PatchEntry[] = [
  {
    id: 'fit-orm-and-critic-to-probe',
    why: "phase 0 refits the ORM and critic on the SFT actor's probe outcomes (fitOrmAndCriticToProbe)",
    oldBranchFixtures: ['campaign-retry-phase-0.json'],
  },
  {
    id: 'critic-filter-chooses-from-more-candidates',
    why: 'RL phases generate candidateFactor x tasksPerPhase candidates and the critic filter keeps at most tasksPerPhase',
    oldBranchFixtures: ['campaign-retry-phase-1.json', 'campaign-retry-phase-2.json'],
  },
  {
    id: 'deploy-models',
    why: "after each phase's training, deployModels serves the new actor (models.serving)",
    oldBranchFixtures: ['campaign-retry-phase-0.json', 'campaign-retry-phase-1.json', 'campaign-retry-phase-2.json', 'campaign-retry-probe-fit-phase-0.json', 'campaign-retry-probe-fit-phase-1.json', 'campaign-retry-probe-fit-phase-2.json'],
  },
  {
    id: 'webarena-environment-checks',
    why: 'prepareEnvironment (site resets, health check) before each phase of a webarena campaign',
    // Asked only by campaigns with environment checks; none was recorded before the patch.
    oldBranchFixtures: [],
  },
  {
    id: 'failed-shard-cancels-the-others',
    why: 'the first failed rollout shard cancels its in-flight siblings and waits for them; no further shard starts',
    oldBranchFixtures: ['campaign-retry-phase-0.json', 'campaign-retry-phase-1.json', 'campaign-retry-phase-2.json', 'campaign-retry-probe-fit-phase-0.json', 'campaign-retry-probe-fit-phase-1.json', 'campaign-retry-probe-fit-phase-2.json'],
  },
];
