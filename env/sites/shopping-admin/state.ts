/** One episode's back office: copy-on-write tables and the queries pages and task templates share. */
import { CowTable, indexBy, nextIdAfter } from '../../state/cowTable';
import { SiteClock } from '../common';
import type { Product, Review } from '../shopping/catalog';
import type { AdminOrder, AdminSeed, CmsPage, Customer } from './data';

export interface AdminBase {
  seed: AdminSeed;
  products: ReadonlyMap<number, Product>;
  reviews: ReadonlyMap<number, Review>;
  customers: ReadonlyMap<number, Customer>;
  orders: ReadonlyMap<number, AdminOrder>;
  pages: ReadonlyMap<number, CmsPage>;
}

export function adminBase(seed: AdminSeed): AdminBase {
  return {
    seed,
    products: indexBy(seed.catalog.products, (p) => p.id),
    reviews: indexBy(seed.catalog.reviews, (r) => r.id),
    customers: indexBy(seed.customers, (c) => c.id),
    orders: indexBy(seed.orders, (o) => o.id),
    pages: indexBy(seed.pages, (p) => p.id),
  };
}

/** `M/D/YY` or `M/D/YYYY` -> ISO date, or undefined. */
export function parseAdminDate(text: string): string | undefined {
  const m = /^\s*(\d{1,2})\/(\d{1,2})\/(\d{2}|\d{4})\s*$/.exec(text);
  if (!m) return undefined;
  const year = m[3]!.length === 2 ? 2000 + Number(m[3]) : Number(m[3]);
  return `${year}-${m[1]!.padStart(2, '0')}-${m[2]!.padStart(2, '0')}`;
}

export class AdminState {
  readonly products: CowTable<number, Product>;
  readonly reviews: CowTable<number, Review>;
  readonly customers: CowTable<number, Customer>;
  readonly orders: CowTable<number, AdminOrder>;
  readonly pages: CowTable<number, CmsPage>;
  readonly clock: SiteClock;
  flash: string | null = null;

  constructor(readonly base: AdminBase) {
    this.products = new CowTable(base.products, nextIdAfter(base.seed.catalog.products));
    this.reviews = new CowTable(base.reviews, nextIdAfter(base.seed.catalog.reviews));
    this.customers = new CowTable(base.customers, nextIdAfter(base.seed.customers));
    this.orders = new CowTable(base.orders, nextIdAfter(base.seed.orders));
    this.pages = new CowTable(base.pages, nextIdAfter(base.seed.pages));
    this.clock = new SiteClock(base.seed.now);
  }

  customerName(id: number): string {
    const c = this.customers.get(id);
    return c ? `${c.firstName} ${c.lastName}` : '';
  }

  /** Orders newest first, filtered by status and by a keyword over number and bill-to name. */
  searchOrders(keyword: string, status: string): AdminOrder[] {
    const k = keyword.trim().toLowerCase();
    return this.orders
      .filter(
        (o) =>
          (!status || o.status === status) && (!k || String(o.id).padStart(9, '0').includes(k) || this.customerName(o.customerId).toLowerCase().includes(k)),
      )
      .sort((a, b) => b.date.localeCompare(a.date) || b.id - a.id);
  }

  searchProducts(keyword: string): Product[] {
    const words = keyword.toLowerCase().split(/\s+/).filter(Boolean);
    return this.products.filter((p) => words.every((w) => p.name.toLowerCase().includes(w) || p.sku.toLowerCase() === w));
  }

  searchCustomers(keyword: string): Customer[] {
    const words = keyword.toLowerCase().split(/\s+/).filter(Boolean);
    return this.customers.filter((c) => words.every((w) => `${c.firstName} ${c.lastName} ${c.email}`.toLowerCase().includes(w)));
  }

  /** Units sold per product over non-canceled orders placed within [from, to] (ISO dates). */
  bestsellers(from: string, to: string): { product: string; price: number; qty: number }[] {
    const sold = new Map<string, { product: string; price: number; qty: number }>();
    for (const o of this.orders.values()) {
      const day = o.date.slice(0, 10);
      if (o.status === 'canceled' || day < from || day > to) continue;
      for (const l of o.lines) {
        const row = sold.get(l.sku) ?? { product: l.name, price: l.price, qty: 0 };
        row.qty += l.qty;
        sold.set(l.sku, row);
      }
    }
    return [...sold.values()].sort((a, b) => b.qty - a.qty || a.product.localeCompare(b.product));
  }

  /** Orders placed within [from, to] (ISO dates), any status. */
  ordersBetween(from: string, to: string): AdminOrder[] {
    return this.orders.filter((o) => o.date.slice(0, 10) >= from && o.date.slice(0, 10) <= to);
  }

  takeFlash(): string | null {
    const message = this.flash;
    this.flash = null;
    return message;
  }
}
