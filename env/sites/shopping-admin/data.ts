/**
 * The back office's seed (modelled on WebArena's Magento admin): the shared catalog, customers,
 * a year and a half of orders in every status with their comment history, and CMS pages.
 */
import type { Rng } from '../../random';
import { FIRST_NAMES, LAST_NAMES, type Catalog } from '../shopping/catalog';
import { US_STATES } from '../common';

export interface Customer {
  id: number;
  firstName: string;
  lastName: string;
  email: string;
  phone: string;
  street: string;
  city: string;
  state: string;
  zip: string;
  group: 'General' | 'Wholesale' | 'Retailer';
  /** ISO date. */
  since: string;
}

export type AdminOrderStatus = 'pending' | 'processing' | 'complete' | 'canceled' | 'holded' | 'closed';

export const ORDER_STATUS_LABELS: Record<AdminOrderStatus, string> = {
  pending: 'Pending',
  processing: 'Processing',
  complete: 'Complete',
  canceled: 'Canceled',
  holded: 'On Hold',
  closed: 'Closed',
};

export interface AdminOrderLine {
  productId: number;
  name: string;
  sku: string;
  price: number;
  qty: number;
}

export interface OrderComment {
  date: string;
  text: string;
  status: AdminOrderStatus;
}

export interface AdminOrder {
  id: number;
  customerId: number;
  /** ISO date-time. */
  date: string;
  status: AdminOrderStatus;
  lines: AdminOrderLine[];
  shipping: number;
  comments: OrderComment[];
}

export interface CmsPage {
  id: number;
  title: string;
  urlKey: string;
  active: boolean;
  content: string;
}

export interface AdminSeed {
  catalog: Catalog;
  customers: Customer[];
  orders: AdminOrder[];
  pages: CmsPage[];
  now: string;
}

const STREETS = [
  'Oak Avenue',
  'Maple Street',
  'Cedar Lane',
  'Pine Road',
  'Elm Street',
  'Washington Blvd',
  'Lake Drive',
  'Park Place',
  'Hillside Ave',
  'River Road',
  'Sunset Blvd',
  'Magnolia Path',
];
const CITIES: [string, string, string][] = [
  ['Hoboken', 'New Jersey', '07030'],
  ['Austin', 'Texas', '78701'],
  ['Seattle', 'Washington', '98101'],
  ['Denver', 'Colorado', '80202'],
  ['Miami', 'Florida', '33101'],
  ['Chicago', 'Illinois', '60601'],
  ['Boston', 'Massachusetts', '02108'],
  ['Phoenix', 'Arizona', '85001'],
  ['Atlanta', 'Georgia', '30303'],
  ['Portland', 'Oregon', '97201'],
  ['Nashville', 'Tennessee', '37201'],
  ['New York', 'New York', '10001'],
  ['San Diego', 'California', '92101'],
  ['Pittsburgh', 'Pennsylvania', '15213'],
  ['Columbus', 'Ohio', '43004'],
  ['Salt Lake City', 'Utah', '84101'],
];

export function generateAdminSeed(rng: Rng, catalog: Catalog): AdminSeed {
  const customers: Customer[] = [];
  const used = new Set<string>();
  const crng = rng.fork('customers');
  while (customers.length < 160) {
    const firstName = crng.pick(FIRST_NAMES);
    const lastName = crng.pick(LAST_NAMES);
    if (used.has(`${firstName} ${lastName}`)) continue;
    used.add(`${firstName} ${lastName}`);
    const [city, state, zip] = crng.pick(CITIES);
    customers.push({
      id: customers.length + 1,
      firstName,
      lastName,
      email: `${firstName}.${lastName}`.toLowerCase().replace(/[^a-z.]/g, '') + crng.pick(['@gmail.com', '@yahoo.com', '@hotmail.com', '@outlook.com']),
      phone: `${crng.int(201, 989)}555${String(crng.int(0, 9999)).padStart(4, '0')}`,
      street: `${crng.int(10, 9999)} ${crng.pick(STREETS)}`,
      city,
      state: US_STATES.includes(state) ? state : 'New York',
      zip,
      group: crng.weighted([
        ['General', 8],
        ['Wholesale', 1],
        ['Retailer', 1],
      ] as const),
      since: new Date(Date.parse('2021-06-01') + Math.floor(crng.next() * 500 * 86_400_000)).toISOString().slice(0, 10),
    });
  }
  const orng = rng.fork('orders');
  const start = Date.parse('2022-01-01T00:00:00Z');
  const span = Date.parse('2023-05-31T00:00:00Z') - start;
  const times = Array.from({ length: 320 }, () => start + Math.floor(orng.next() * span)).sort((a, b) => a - b);
  const enabled = catalog.products;
  const orders: AdminOrder[] = times.map((time, i) => {
    const recent = time > Date.parse('2023-05-01');
    const status: AdminOrderStatus = recent
      ? orng.weighted([
          ['pending', 4],
          ['processing', 3],
          ['holded', 1],
          ['complete', 2],
        ] as const)
      : orng.weighted([
          ['complete', 14],
          ['canceled', 4],
          ['closed', 1],
          ['processing', 1],
        ] as const);
    const lines = orng.sample(enabled, orng.int(1, 3)).map((p) => ({
      productId: p.id,
      name: p.name,
      sku: p.sku,
      price: p.price,
      qty: orng.weighted([
        [1, 6],
        [2, 3],
        [3, 1],
      ] as const),
    }));
    const date = new Date(time).toISOString();
    return {
      id: i + 1,
      customerId: orng.int(1, customers.length),
      date,
      status,
      lines,
      shipping: 5 * lines.reduce((n, l) => n + l.qty, 0),
      comments: [{ date, text: 'Order placed.', status: 'pending' as const }],
    };
  });
  const pages: CmsPage[] = [
    ['404 Not Found', 'no-route'],
    ['Home Page', 'home'],
    ['Enable Cookies', 'enable-cookies'],
    ['Privacy and Cookie Policy', 'privacy-policy-cookie-restriction-mode'],
    ['About us', 'about-us'],
    ['Customer Service', 'customer-service'],
  ].map(([title, urlKey], i) => ({ id: i + 1, title: title as string, urlKey: urlKey as string, active: true, content: `<p>${title}</p>` }));
  return { catalog, customers, orders, pages, now: '2023-06-01T09:00:00.000Z' };
}

export function adminOrderNumber(id: number): string {
  return String(id).padStart(9, '0');
}

export function adminOrderTotal(order: Pick<AdminOrder, 'lines' | 'shipping'>): number {
  return Math.round((order.lines.reduce((s, l) => s + l.price * l.qty, 0) + order.shipping) * 100) / 100;
}
