/**
 * Shared test plumbing: one Chromium per test file, fixture directories served on 127.0.0.1, and small
 * lookups into observations.
 */
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { CHROMIUM_ARGS, ensureChromium } from '../../infra/tools';
import type { Observation, ObservedElement } from '../../browser/contract';
import { VIEWPORT } from '../../browser/observe';

export const SITE_DIR = fileURLToPath(new URL('./fixtures/site', import.meta.url));
export const PAGES_DIR = fileURLToPath(new URL('./fixtures/pages', import.meta.url));

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: (await ensureChromium()).path, args: CHROMIUM_ARGS });
}

export function newContext(browser: Browser): Promise<BrowserContext> {
  return browser.newContext({ viewport: VIEWPORT });
}

/** The element whose full text (or own text) is `text`; fails loudly when there is none. */
export function elementWithText(observation: Observation, text: string): ObservedElement {
  const found = observation.elements.find((e) => e.fullText === text || e.text === text);
  if (!found) throw new Error(`no element with text ${JSON.stringify(text)} in ${observation.html}`);
  return found;
}

export function texts(observation: Observation): string[] {
  return observation.elements.map((e) => e.fullText ?? e.text);
}
