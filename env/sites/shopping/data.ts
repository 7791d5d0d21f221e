/**
 * The storefront's seed: the shared catalog plus one signed-in customer (as in WebArena, Emma
 * Lopez) with her address, order history, wish list and newsletter preference.
 */
import { generateCatalog, type Catalog } from './catalog';
import type { Rng } from '../../random';

export interface Address {
  firstName: string;
  lastName: string;
  street: string;
  city: string;
  state: string;
  zip: string;
  country: string;
  phone: string;
}

export interface OrderLine {
  productId: number;
  name: string;
  sku: string;
  price: number;
  qty: number;
  options: Record<string, string>;
}

export type OrderStatus = 'Pending' | 'Processing' | 'Complete' | 'Canceled';

export interface Order {
  id: number;
  /** ISO date-time. */
  date: string;
  status: OrderStatus;
  lines: OrderLine[];
  address: Address;
  shipping: number;
}

export interface ShoppingSeed {
  catalog: Catalog;
  customer: { firstName: string; lastName: string; email: string };
  address: Address;
  orders: Order[];
  wishlist: number[];
  newsletter: boolean;
  /** The site's "now": changes made in an episode are dated after it. */
  now: string;
}

/** Flat-rate shipping per item, as Magento's default flat rate. */
export const SHIPPING_PER_ITEM = 5;

export function orderNumber(id: number): string {
  return String(id).padStart(9, '0');
}

export function orderSubtotal(order: Pick<Order, 'lines'>): number {
  return Math.round(order.lines.reduce((sum, l) => sum + l.price * l.qty, 0) * 100) / 100;
}

export function orderTotal(order: Pick<Order, 'lines' | 'shipping'>): number {
  return Math.round((orderSubtotal(order) + order.shipping) * 100) / 100;
}

export function generateShoppingSeed(rng: Rng, catalog: Catalog = generateCatalog(rng.fork('catalog'))): ShoppingSeed {
  const address: Address = {
    firstName: 'Emma',
    lastName: 'Lopez',
    street: '101 S San Mateo Dr',
    city: 'San Mateo',
    state: 'California',
    zip: '94010',
    country: 'United States',
    phone: '6505551212',
  };
  const orderRng = rng.fork('orders');
  const orders: Order[] = [];
  const start = Date.parse('2022-01-05T10:00:00Z');
  const span = Date.parse('2023-05-20T10:00:00Z') - start;
  const dates = Array.from({ length: 38 }, () => start + Math.floor(orderRng.next() * span)).sort((a, b) => a - b);
  dates.forEach((time, i) => {
    const lines: OrderLine[] = orderRng.sample(catalog.products, orderRng.int(1, 4)).map((p) => ({
      productId: p.id,
      name: p.name,
      sku: p.sku,
      price: p.price,
      qty: orderRng.weighted([
        [1, 6],
        [2, 2],
        [3, 1],
      ] as const),
      options: Object.fromEntries(p.options.map((o) => [o.label, orderRng.pick(o.values)])),
    }));
    const recent = i >= dates.length - 3;
    const status: OrderStatus = recent
      ? orderRng.pick(['Pending', 'Processing'] as const)
      : orderRng.weighted([
          ['Complete', 7],
          ['Canceled', 2],
          ['Processing', 1],
        ] as const);
    orders.push({
      id: 150 + i,
      date: new Date(time).toISOString(),
      status,
      lines,
      address,
      shipping: SHIPPING_PER_ITEM * lines.reduce((n, l) => n + l.qty, 0),
    });
  });
  return {
    catalog,
    customer: { firstName: 'Emma', lastName: 'Lopez', email: 'emma.lopez@gmail.com' },
    address,
    orders,
    wishlist: rng
      .fork('wishlist')
      .sample(catalog.products, 3)
      .map((p) => p.id),
    newsletter: false,
    now: '2023-06-01T09:00:00.000Z',
  };
}
