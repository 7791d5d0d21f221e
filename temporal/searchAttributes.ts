// The campaign's custom search attributes (registered on the dev server by infra/temporalServer.ts).
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const CAMPAIGN_ID = defineSearchAttributeKey('CampaignId', SearchAttributeType.KEYWORD);
export const PHASE = defineSearchAttributeKey('Phase', SearchAttributeType.INT);
export const SUCCESS_RATE = defineSearchAttributeKey('SuccessRate', SearchAttributeType.DOUBLE);
export const STATUS = defineSearchAttributeKey('Status', SearchAttributeType.KEYWORD);

/** Every one of them, as the dev server registers them at start. */
export const CAMPAIGN_SEARCH_ATTRIBUTES = [CAMPAIGN_ID, PHASE, SUCCESS_RATE, STATUS];
