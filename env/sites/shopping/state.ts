/**
 * One episode's storefront: copy-on-write tables over the seed, and the queries both the pages and
 * the task templates use (so a task's reference answer is what the page shows).
 */
import { CowTable, indexBy, nextIdAfter } from '../../state/cowTable';
import { SiteClock } from '../common';
import type { Category, Product, Review } from './catalog';
import type { Address, Order, ShoppingSeed } from './data';
import { SHIPPING_PER_ITEM } from './data';

export interface CartLine {
  id: number;
  productId: number;
  qty: number;
  options: Record<string, string>;
}

export interface ContactMessage {
  id: number;
  name: string;
  email: string;
  comment: string;
}

/** Seed maps built once per seed and shared by every episode. */
export interface ShoppingBase {
  seed: ShoppingSeed;
  categories: ReadonlyMap<number, Category>;
  products: ReadonlyMap<number, Product>;
  productsByKey: ReadonlyMap<string, Product>;
  reviews: ReadonlyMap<number, Review>;
  orders: ReadonlyMap<number, Order>;
  wishlist: ReadonlyMap<number, { id: number; productId: number }>;
}

export function shoppingBase(seed: ShoppingSeed): ShoppingBase {
  return {
    seed,
    categories: indexBy(seed.catalog.categories, (c) => c.id),
    products: indexBy(seed.catalog.products, (p) => p.id),
    productsByKey: indexBy(seed.catalog.products, (p) => p.urlKey),
    reviews: indexBy(seed.catalog.reviews, (r) => r.id),
    orders: indexBy(seed.orders, (o) => o.id),
    wishlist: indexBy(
      seed.wishlist.map((productId, i) => ({ id: i + 1, productId })),
      (w) => w.id,
    ),
  };
}

export type SortKey = 'relevance' | 'position' | 'name' | 'price';

export class ShoppingState {
  readonly reviews: CowTable<number, Review>;
  readonly orders: CowTable<number, Order>;
  readonly wishlist: CowTable<number, { id: number; productId: number }>;
  readonly cart = new CowTable<number, CartLine>(new Map());
  readonly messages = new CowTable<number, ContactMessage>(new Map());
  address: Address;
  newsletter: boolean;
  flash: string | null = null;
  readonly clock: SiteClock;

  constructor(readonly base: ShoppingBase) {
    this.reviews = new CowTable(base.reviews, nextIdAfter(base.seed.catalog.reviews));
    this.orders = new CowTable(base.orders, nextIdAfter(base.seed.orders));
    this.wishlist = new CowTable(base.wishlist, base.wishlist.size + 1);
    this.address = base.seed.address;
    this.newsletter = base.seed.newsletter;
    this.clock = new SiteClock(base.seed.now);
  }

  get customer(): ShoppingSeed['customer'] {
    return this.base.seed.customer;
  }

  product(id: number): Product | undefined {
    return this.base.products.get(id);
  }

  categories(): Category[] {
    return this.base.seed.catalog.categories;
  }

  category(id: number): Category | undefined {
    return this.base.categories.get(id);
  }

  categoryByPath(path: string): Category | undefined {
    return this.base.seed.catalog.categories.find((c) => c.path === path);
  }

  children(categoryId: number): Category[] {
    return this.base.seed.catalog.categories.filter((c) => c.parentId === categoryId);
  }

  /** Products of a category and its subcategories, in catalog order. */
  productsIn(categoryId: number): Product[] {
    const ids = new Set([categoryId, ...this.children(categoryId).map((c) => c.id)]);
    return this.base.seed.catalog.products.filter((p) => ids.has(p.categoryId));
  }

  /** Products whose name contains every word of the query (case-insensitive). */
  search(query: string): Product[] {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    if (words.length === 0) return [];
    return this.base.seed.catalog.products.filter((p) => {
      const name = p.name.toLowerCase();
      return words.every((w) => name.includes(w));
    });
  }

  /** Approved reviews of a product, newest first. */
  productReviews(productId: number): Review[] {
    return this.reviews.filter((r) => r.productId === productId && r.status === 'Approved').sort((a, b) => b.date.localeCompare(a.date) || b.id - a.id);
  }

  /** Average rating in percent (Magento shows ratings out of 100), 0 without reviews. */
  ratingPercent(productId: number): number {
    const reviews = this.productReviews(productId);
    if (reviews.length === 0) return 0;
    return Math.round((reviews.reduce((s, r) => s + r.rating, 0) / reviews.length) * 20);
  }

  /** Orders newest first, as My Orders lists them. */
  orderHistory(): Order[] {
    return this.orders.all().sort((a, b) => b.date.localeCompare(a.date) || b.id - a.id);
  }

  cartLines(): CartLine[] {
    return this.cart.all();
  }

  cartCount(): number {
    return this.cart.all().reduce((n, l) => n + l.qty, 0);
  }

  cartSubtotal(): number {
    return Math.round(this.cart.all().reduce((s, l) => s + (this.product(l.productId)?.price ?? 0) * l.qty, 0) * 100) / 100;
  }

  cartShipping(): number {
    return SHIPPING_PER_ITEM * this.cartCount();
  }

  takeFlash(): string | null {
    const message = this.flash;
    this.flash = null;
    return message;
  }
}

export function sortProducts(products: Product[], key: SortKey, dir: 'asc' | 'desc'): Product[] {
  const sign = dir === 'desc' ? -1 : 1;
  if (key === 'name') return [...products].sort((a, b) => sign * a.name.localeCompare(b.name));
  if (key === 'price') return [...products].sort((a, b) => sign * (a.price - b.price) || a.id - b.id);
  return dir === 'desc' ? [...products].reverse() : products;
}

/** The price filter buckets of the layered navigation, as `[low, high)` in dollars. */
export const PRICE_BUCKETS: [number, number][] = [
  [0, 25],
  [25, 50],
  [50, 100],
  [100, 200],
  [200, 1000],
];
