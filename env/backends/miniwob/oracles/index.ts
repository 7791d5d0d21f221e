/** The oracle planners of this folder, by task type (../oracle.ts adds them to its table). */
import { CALENDAR_PLANNERS } from './calendar';
import { FORM_PLANNERS } from './forms';
import { STEP_PLANNERS } from './stepSolvers';

export const MINIWOB_PLANNERS = { ...CALENDAR_PLANNERS, ...FORM_PLANNERS, ...STEP_PLANNERS };
