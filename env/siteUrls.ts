/**
 * Site names and the URL map that resolves WebArena's placeholders (`__SHOPPING__`, ...), so one task
 * file can point at the embedded sites or at real WebArena deployments.
 */
export const SITE_NAMES = ['shopping', 'shopping_admin', 'reddit', 'gitlab', 'map', 'wikipedia'] as const;
export type SiteName = (typeof SITE_NAMES)[number];

/** The four sites this project embeds; map and wikipedia exist only as real WebArena sites. */
export const EMBEDDED_SITE_NAMES = ['shopping', 'shopping_admin', 'reddit', 'gitlab'] as const;
export type EmbeddedSiteName = (typeof EMBEDDED_SITE_NAMES)[number];

/** Ports WebArena's docker setup uses; the embedded sites default to them. */
export const WEBARENA_PORTS: Record<EmbeddedSiteName, number> = { shopping: 7770, shopping_admin: 7780, reddit: 9999, gitlab: 8023 };

export type SiteUrls = Partial<Record<SiteName, string>>;

export const PLACEHOLDERS: Record<SiteName, string> = {
  shopping: '__SHOPPING__',
  shopping_admin: '__SHOPPING_ADMIN__',
  reddit: '__REDDIT__',
  gitlab: '__GITLAB__',
  map: '__MAP__',
  wikipedia: '__WIKIPEDIA__',
};

/** The addresses of a stock WebArena deployment on one host, as its docker setup publishes them. */
export const WEBARENA_DEFAULT_SITE_URLS: Record<SiteName, string> = {
  shopping: 'http://localhost:7770',
  shopping_admin: 'http://localhost:7780/admin',
  reddit: 'http://localhost:9999',
  gitlab: 'http://localhost:8023',
  map: 'http://localhost:3000',
  wikipedia: 'http://localhost:8888/wikipedia_en_all_maxi_2022-05/A/User:The_other_Kiwix_guy/Landing',
};

export function isSiteName(name: string): name is SiteName {
  return (SITE_NAMES as readonly string[]).includes(name);
}

/** Replaces every known placeholder; a placeholder whose site has no URL is an error. */
export function resolvePlaceholders(text: string, urls: SiteUrls): string {
  let out = text;
  for (const site of SITE_NAMES) {
    const placeholder = PLACEHOLDERS[site];
    if (!out.includes(placeholder)) continue;
    const url = urls[site];
    if (url === undefined) throw new Error(`no URL configured for site ${site} (placeholder ${placeholder})`);
    out = out.split(placeholder).join(url.replace(/\/$/, ''));
  }
  return out;
}

/** Parses `shopping=http://host:port` pairs (CLI flags) into a URL map. */
export function parseSiteUrlPairs(pairs: string[]): SiteUrls {
  const urls: SiteUrls = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq);
    if (eq <= 0 || !isSiteName(name)) throw new Error(`expected SITE=URL with SITE one of ${SITE_NAMES.join(', ')}: ${pair}`);
    urls[name] = pair.slice(eq + 1);
  }
  return urls;
}
