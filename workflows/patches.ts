/**
 * The ledger of the campaign workflow's patches (workflows/campaign.ts): why each exists, its stage,
 * and which recorded histories (test/fixtures/histories) replay its old branch, i.e. were recorded by a
 * workflow without it. A patch's lifecycle, as Temporal's patching samples lay it out:
 *
 *   patched     behind the `patched` call: new executions run the new code; an execution that ran
 *               the old code replays it, pinned by the fixtures listed here
 *   deprecated  `deprecatePatch(id)` once no running execution started before the patch (each run is one
 *               phase, so: every campaign has continued past a phase boundary under the patched worker,
 *               or finished); the old branch goes, and the fixtures that pinned it with it
 *   removed     the call and its entry go once no running execution has the patch's marker unreplayed
 *               (one release later: every campaign has again crossed a phase boundary)
 *
 * test/patches.test.ts checks the ledger against the workflow code and the fixtures; docs/durability.md
 * says how an operator upgrades workers under running campaigns.
 */
export interface PatchEntry {
  id: string;
  why: string;
  stage: 'patched' | 'deprecated';
  /** Recorded histories without the patch's marker: they pin the old branch while the patch is `patched` (none once deprecated). */
  oldBranchFixtures: string[];
}

export const CAMPAIGN_PATCHES: readonly PatchEntry[] = [
  {
    id: 'fit-orm-and-critic-to-probe',
    why: "phase 0 refits the ORM and critic on the SFT actor's probe outcomes (fitOrmAndCriticToProbe)",
    stage: 'deprecated',
    oldBranchFixtures: [],
  },
  {
    id: 'critic-filter-chooses-from-more-candidates',
    why: 'RL phases generate candidateFactor x tasksPerPhase candidates and the critic filter keeps at most tasksPerPhase',
    stage: 'deprecated',
    oldBranchFixtures: [],
  },
  {
    id: 'deploy-models',
    why: "after each phase's training, deployModels serves the new actor (models.serving)",
    stage: 'deprecated',
    oldBranchFixtures: [],
  },
  {
    id: 'webarena-environment-checks',
    why: 'prepareEnvironment (site resets, health check) before each phase of a webarena campaign',
    stage: 'deprecated',
    oldBranchFixtures: [],
  },
  {
    id: 'failed-shard-cancels-the-others',
    why: 'the first failed rollout shard cancels its in-flight siblings and waits for them; no further shard starts',
    stage: 'deprecated',
    oldBranchFixtures: [],
  },
];
