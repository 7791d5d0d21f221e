/**
 * No model in the role. critic: no critic filter, each phase rolls out the first tasksPerPhase
 * candidates (the curriculum's seeded draw), and the trainer still trains a critic for the actor's
 * advantages (for a trainer whose critic no server serves: webrl-torch on a laptop). feasibility: no
 * check after the critic filter. serving: the configured model serves every phase.
 */
import { nameOnly } from '../fields';

const none = nameOnly('none');

export const settings = { critic: none, feasibility: none, serving: none };
