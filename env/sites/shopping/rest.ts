/**
 * The part of Magento 2's REST API that WebArena's evaluation helpers call, served by the embedded
 * storefront and back office over their own data, in Magento's response shapes:
 *
 * - `POST /rest[/<store>]/V1/integration/admin/token` with `{"username", "password"}` answers the
 *   admin token as a JSON string (the embedded shop's seeded admin account, `EMBEDDED_SHOP_ADMIN`);
 * - `GET /rest[/<store>]/V1/orders` with Magento's `searchCriteria[...]` query (filter groups, sort
 *   orders, page size, current page) answers `{ items, search_criteria, total_count }`;
 * - `GET /rest[/<store>]/V1/products/<sku>/reviews` answers the product's reviews, oldest first, each
 *   with `nickname` and `ratings: [{ rating_name: 'Rating', percent, value }]`.
 *
 * The two data calls need `Authorization: Bearer <token>`. Like every page of the embedded sites they
 * read the episode state named by the request's episode cookie (the public state without one).
 */
import { randomBytes } from 'node:crypto';
import { Secret, type ShopAdminAccount } from '../../../config/secrets';
import { json, type RequestContext, type Router } from '../../http/router';
import type { AdminState } from '../shopping-admin/state';
import type { Review } from './catalog';
import { orderNumber } from './data';
import type { ShoppingState } from './state';

/** The embedded shop's admin account (the same as a stock WebArena deployment's). */
export const EMBEDDED_SHOP_ADMIN = { username: 'admin', password: 'admin1234' } as const;

/** The admin account the token endpoint accepts: the seeded one, or a standalone deployment's back-office account. */
export interface ShopAdminCredentials {
  username: string;
  password: string;
}

/** The same account as the REST helpers take it (config/secrets.ts's wrapper: it never prints). */
export const EMBEDDED_SHOP_ADMIN_ACCOUNT: ShopAdminAccount = {
  username: new Secret(EMBEDDED_SHOP_ADMIN.username),
  password: new Secret(EMBEDDED_SHOP_ADMIN.password),
};

/** One token per process, valid on both embedded shop sites (one Magento install serves both). */
const ADMIN_TOKEN = randomBytes(16).toString('hex');

export interface RestOrderItem {
  item_id: number;
  order_id: number;
  sku: string;
  name: string;
  product_id: number;
  product_type: 'simple';
  price: number;
  qty_ordered: number;
  row_total: number;
}

export interface RestOrder {
  entity_id: number;
  increment_id: string;
  state: string;
  status: string;
  created_at: string;
  updated_at: string;
  customer_id: number;
  customer_email: string;
  customer_firstname: string;
  customer_lastname: string;
  customer_is_guest: 0;
  store_id: 1;
  order_currency_code: 'USD';
  subtotal: number;
  shipping_amount: number;
  grand_total: number;
  base_grand_total: number;
  total_qty_ordered: number;
  total_item_count: number;
  items: RestOrderItem[];
  billing_address: Record<string, unknown>;
  status_histories: { comment: string; created_at: string; status: string; entity_name: 'order'; parent_id: number }[];
}

export interface RestReview {
  id: number;
  title: string;
  detail: string;
  nickname: string;
  ratings: { vote_id: number; rating_id: 4; rating_name: 'Rating'; percent: number; value: number }[];
  review_entity: 'product';
  review_type: 2;
  /** 1 approved, 2 pending. */
  review_status: 1 | 2;
  created_at: string;
  entity_pk_value: number;
  store_id: 1;
  stores: [1];
}

/** What a site's REST endpoints read from its state. */
export interface RestSource<S> {
  orders(state: S): RestOrder[];
  /** A product's reviews in creation order; undefined when no product has that SKU. */
  reviews(state: S, sku: string): RestReview[] | undefined;
}

/** `2023-05-20T10:00:00.000Z` or `2023-05-20` -> Magento's `2023-05-20 10:00:00`. */
export function magentoDate(iso: string): string {
  const [day, time = '00:00:00'] = iso.split('T');
  return `${day} ${time.slice(0, 8)}`;
}

/** Magento's order state for an order status. */
export function orderState(status: string): string {
  return status === 'pending' ? 'new' : status;
}

export function restReview(review: Review): RestReview {
  return {
    id: review.id,
    title: review.summary,
    detail: review.text,
    nickname: review.nickname,
    ratings: [{ vote_id: review.id, rating_id: 4, rating_name: 'Rating', percent: review.rating * 20, value: review.rating }],
    review_entity: 'product',
    review_type: 2,
    review_status: review.status === 'Approved' ? 1 : 2,
    created_at: magentoDate(review.date),
    entity_pk_value: review.productId,
    store_id: 1,
    stores: [1],
  };
}

function authorized(ctx: RequestContext<unknown>): boolean {
  return ctx.headers.authorization === `Bearer ${ADMIN_TOKEN}`;
}

const UNAUTHORIZED = { message: 'The consumer is not authorized to access this resource; send an admin token as "Authorization: Bearer <token>".' };

type Condition = 'eq' | 'neq' | 'gt' | 'gteq' | 'lt' | 'lteq' | 'like' | 'in' | 'nin';
const CONDITIONS: readonly Condition[] = ['eq', 'neq', 'gt', 'gteq', 'lt', 'lteq', 'like', 'in', 'nin'];

interface Filter {
  field: string;
  value: string;
  condition_type: Condition;
}

interface SearchCriteria {
  filter_groups: { filters: Filter[] }[];
  sort_orders: { field: string; direction: 'ASC' | 'DESC' }[];
  page_size?: number;
  current_page: number;
}

class CriteriaError extends Error {}

/** Reads Magento's `searchCriteria[...]` query parameters. */
export function parseSearchCriteria(query: URLSearchParams): SearchCriteria {
  const groups: Record<string, Record<string, Partial<Record<'field' | 'value' | 'condition_type', string>>>> = {};
  const sorts: Record<string, { field?: string; direction?: string }> = {};
  let pageSize: number | undefined;
  let currentPage = 1;
  const count = (key: string, value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) throw new CriteriaError(`${key} must be a non-negative integer, got "${value}"`);
    return n;
  };
  for (const [key, value] of query) {
    let m: RegExpExecArray | null;
    if ((m = /^searchCriteria\[filter_?[gG]roups\]\[(\d+)\]\[filters\]\[(\d+)\]\[(field|value|condition_?[tT]ype)\]$/.exec(key))) {
      const part = m[3]!.startsWith('condition') ? 'condition_type' : (m[3] as 'field' | 'value');
      ((groups[m[1]!] ??= {})[m[2]!] ??= {})[part] = value;
    } else if ((m = /^searchCriteria\[sort_?[oO]rders\]\[(\d+)\]\[(field|direction)\]$/.exec(key))) {
      (sorts[m[1]!] ??= {})[m[2] as 'field' | 'direction'] = value;
    } else if (/^searchCriteria\[page_?[sS]ize\]$/.test(key)) {
      pageSize = count(key, value);
    } else if (/^searchCriteria\[current_?[pP]age\]$/.test(key)) {
      currentPage = Math.max(1, count(key, value));
    } else if (key !== 'searchCriteria' && key !== 'fields') {
      throw new CriteriaError(`"${key}" is not a search criterion this API supports`);
    }
  }
  const byIndex = <T>(record: Record<string, T>): T[] =>
    Object.entries(record)
      .sort(([a], [b]) => Number(a) - Number(b))
      .map(([, v]) => v);
  const filter_groups = byIndex(groups).map((group) => ({
    filters: byIndex(group).map((f) => {
      const condition = (f.condition_type ?? 'eq').toLowerCase() as Condition;
      if (!f.field || f.value === undefined) throw new CriteriaError('every filter needs a field and a value');
      if (!CONDITIONS.includes(condition)) throw new CriteriaError(`condition type "${condition}" is not supported`);
      return { field: f.field, value: f.value, condition_type: condition };
    }),
  }));
  const sort_orders = byIndex(sorts).map((s) => {
    if (!s.field) throw new CriteriaError('every sort order needs a field');
    return { field: s.field, direction: (s.direction ?? 'ASC').toUpperCase() === 'DESC' ? ('DESC' as const) : ('ASC' as const) };
  });
  return { filter_groups, sort_orders, ...(pageSize ? { page_size: pageSize } : {}), current_page: currentPage };
}

function compare(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = String(a ?? '');
  const y = String(b ?? '');
  const nx = Number(x);
  const ny = Number(y);
  if (x !== '' && y !== '' && Number.isFinite(nx) && Number.isFinite(ny)) return nx - ny;
  return x < y ? -1 : x > y ? 1 : 0;
}

function matchesFilter(row: Record<string, unknown>, filter: Filter): boolean {
  const value = row[filter.field];
  switch (filter.condition_type) {
    case 'eq':
      return compare(value, filter.value) === 0;
    case 'neq':
      return compare(value, filter.value) !== 0;
    case 'gt':
      return compare(value, filter.value) > 0;
    case 'gteq':
      return compare(value, filter.value) >= 0;
    case 'lt':
      return compare(value, filter.value) < 0;
    case 'lteq':
      return compare(value, filter.value) <= 0;
    case 'like': {
      const pattern = filter.value
        .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
        .replaceAll('%', '.*')
        .replaceAll('_', '.');
      return new RegExp(`^${pattern}$`, 'is').test(String(value ?? ''));
    }
    case 'in':
      return filter.value.split(',').some((v) => compare(value, v.trim()) === 0);
    case 'nin':
      return !filter.value.split(',').some((v) => compare(value, v.trim()) === 0);
  }
}

/** Filters (groups AND-ed, filters within a group OR-ed), sorts and pages rows as Magento's repositories do. */
export function search<T extends object>(rows: T[], criteria: SearchCriteria): { items: T[]; total: number } {
  const matched = rows.filter((row) =>
    criteria.filter_groups.every((group) => group.filters.length === 0 || group.filters.some((f) => matchesFilter(row as Record<string, unknown>, f))),
  );
  const sorted = [...matched].sort((a, b) => {
    for (const order of criteria.sort_orders) {
      const c = compare((a as Record<string, unknown>)[order.field], (b as Record<string, unknown>)[order.field]);
      if (c !== 0) return order.direction === 'DESC' ? -c : c;
    }
    return 0;
  });
  const size = criteria.page_size;
  const items = size ? sorted.slice((criteria.current_page - 1) * size, criteria.current_page * size) : sorted;
  return { items, total: matched.length };
}

/** Adds the REST endpoints to a shop site's router (before its catch-all page routes). */
export function addRestRoutes<S>(router: Router<S>, source: RestSource<S>, admin: ShopAdminCredentials = EMBEDDED_SHOP_ADMIN): Router<S> {
  return router
    .post('/rest/:store?/V1/integration/admin/token', (ctx) => {
      let credentials: { username?: unknown; password?: unknown };
      try {
        credentials = JSON.parse(ctx.body) as typeof credentials;
      } catch {
        return json({ message: 'The request body must be JSON: {"username": ..., "password": ...}.' }, 400);
      }
      if (credentials?.username !== admin.username || credentials?.password !== admin.password) {
        return json({ message: 'The sign-in was incorrect or the account is disabled.' }, 401);
      }
      return json(ADMIN_TOKEN);
    })
    .get('/rest/:store?/V1/orders', (ctx) => {
      if (!authorized(ctx)) return json(UNAUTHORIZED, 401);
      let criteria: SearchCriteria;
      try {
        criteria = parseSearchCriteria(ctx.query);
      } catch (error) {
        if (error instanceof CriteriaError) return json({ message: error.message }, 400);
        throw error;
      }
      const { items, total } = search(source.orders(ctx.state), criteria);
      return json({ items, search_criteria: criteria, total_count: total });
    })
    .get('/rest/:store?/V1/products/:sku/reviews', (ctx) => {
      if (!authorized(ctx)) return json(UNAUTHORIZED, 401);
      const reviews = source.reviews(ctx.state, ctx.params.sku ?? '');
      if (!reviews) return json({ message: `The product with SKU "${ctx.params.sku}" does not exist.` }, 404);
      return json(reviews);
    });
}

interface OrderFacts {
  id: number;
  date: string;
  status: string;
  lines: { productId: number; name: string; sku: string; price: number; qty: number }[];
  shipping: number;
  customer: { id: number; email: string; firstName: string; lastName: string };
  address: { street: string; city: string; state: string; zip: string; phone: string };
  comments: { date: string; text: string; status: string }[];
}

function restOrder(o: OrderFacts): RestOrder {
  const cents = (n: number) => Math.round(n * 100) / 100;
  const subtotal = cents(o.lines.reduce((sum, l) => sum + l.price * l.qty, 0));
  const total = cents(subtotal + o.shipping);
  const created = magentoDate(o.date);
  const status = o.status.toLowerCase();
  return {
    entity_id: o.id,
    increment_id: orderNumber(o.id),
    state: orderState(status),
    status,
    created_at: created,
    updated_at: o.comments.length ? magentoDate(o.comments[o.comments.length - 1]!.date) : created,
    customer_id: o.customer.id,
    customer_email: o.customer.email,
    customer_firstname: o.customer.firstName,
    customer_lastname: o.customer.lastName,
    customer_is_guest: 0,
    store_id: 1,
    order_currency_code: 'USD',
    subtotal,
    shipping_amount: o.shipping,
    grand_total: total,
    base_grand_total: total,
    total_qty_ordered: o.lines.reduce((n, l) => n + l.qty, 0),
    total_item_count: o.lines.length,
    items: o.lines.map((l, i) => ({
      item_id: o.id * 100 + i + 1,
      order_id: o.id,
      sku: l.sku,
      name: l.name,
      product_id: l.productId,
      product_type: 'simple',
      price: l.price,
      qty_ordered: l.qty,
      row_total: cents(l.price * l.qty),
    })),
    billing_address: {
      address_type: 'billing',
      parent_id: o.id,
      firstname: o.customer.firstName,
      lastname: o.customer.lastName,
      email: o.customer.email,
      street: [o.address.street],
      city: o.address.city,
      region: o.address.state,
      postcode: o.address.zip,
      country_id: 'US',
      telephone: o.address.phone,
    },
    status_histories: o.comments.map((c) => ({ comment: c.text, created_at: magentoDate(c.date), status: c.status, entity_name: 'order', parent_id: o.id })),
  };
}

const byId = (a: { id: number }, b: { id: number }) => a.id - b.id;

/** The storefront's REST view: its customer's orders, the catalogue's reviews (all statuses). */
export const STOREFRONT_REST: RestSource<ShoppingState> = {
  orders: (s) =>
    s.orders
      .all()
      .map((o) =>
        restOrder({ ...o, customer: { id: 1, email: s.customer.email, firstName: s.customer.firstName, lastName: s.customer.lastName }, comments: [] }),
      ),
  reviews: (s, sku) => {
    const product = s.base.seed.catalog.products.find((p) => p.sku === sku);
    return (
      product &&
      s.reviews
        .filter((r) => r.productId === product.id)
        .sort(byId)
        .map(restReview)
    );
  },
};

/** The back office's REST view: every customer's orders with their comment history, reviews. */
export const ADMIN_REST: RestSource<AdminState> = {
  orders: (s) =>
    s.orders.all().map((o) => {
      const c = s.customers.get(o.customerId);
      return restOrder({
        ...o,
        customer: { id: o.customerId, email: c?.email ?? '', firstName: c?.firstName ?? '', lastName: c?.lastName ?? '' },
        address: { street: c?.street ?? '', city: c?.city ?? '', state: c?.state ?? '', zip: c?.zip ?? '', phone: c?.phone ?? '' },
      });
    }),
  reviews: (s, sku) => {
    const product = s.products.find((p) => p.sku === sku);
    return (
      product &&
      s.reviews
        .filter((r) => r.productId === product.id)
        .sort(byId)
        .map(restReview)
    );
  },
};
