/**
 * Annotates the page (webrl.md §2) for an observation profile: every visible element with its box, direct
 * text and state; clickable elements numbered 0,1,2,... in document order and marked in the DOM with
 * `data-webrl-id` so the executor finds element N. The work happens in the page (pageRuntime.ts); this
 * is its typed entry.
 */
import type { Page } from 'playwright-core';
import { callPage } from './pageCall';
import type { AnnotationResult, ObservationProfile } from './pageRuntime';

export type { AnnotatedElement, AnnotatedNode, AnnotationResult, ObservationProfile } from './pageRuntime';

export function annotatePage(page: Page, profile: ObservationProfile = 'default'): Promise<AnnotationResult> {
  return callPage(page, 'annotate', profile);
}
