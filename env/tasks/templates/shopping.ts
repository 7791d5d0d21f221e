/** Task templates on the storefront (`__SHOPPING__`). */
import type { OracleStep } from '../../../browser/contract';
import { longDate, money, moneyNumber, US_STATES } from '../../sites/common';
import type { Product } from '../../sites/shopping/catalog';
import { orderNumber, orderTotal } from '../../sites/shopping/data';
import type { ShoppingState } from '../../sites/shopping/state';
import { PRICE_BUCKETS, sortProducts } from '../../sites/shopping/state';
import {
  button,
  byAttr,
  byId,
  click,
  cycle,
  DONE,
  exit,
  link,
  programHtml,
  search,
  select,
  selectable,
  stringMatch,
  type,
  urlMatch,
  type TaskTemplate,
} from '../template';

const HOME = '__SHOPPING__';

/** Search the full name, then open the product from the results. */
function openProduct(p: Product): OracleStep[] {
  return [search(byId('search'), p.name), click(link(p.name))];
}

function openCategory(s: ShoppingState, categoryId: number): OracleStep[] {
  const category = s.category(categoryId);
  const parent = category?.parentId ? s.category(category.parentId) : undefined;
  if (!category || !parent) throw new Error(`category ${categoryId} is not a subcategory`);
  return [click(link(parent.name)), click(link(category.name))];
}

function openOrders(): OracleStep[] {
  return [click(link('My Account')), click(link('My Orders'))];
}

/** Steps from My Orders page 1 to the page holding `orderId`. */
function pageOfOrder(s: ShoppingState, orderId: number): OracleStep[] {
  const page = Math.floor(s.orderHistory().findIndex((o) => o.id === orderId) / 10) + 1;
  return page > 1 ? [click({ tag: 'a', text: String(page), attributes: { class: 'page' } })] : [];
}

/** How an intent says a price sort direction, and the sorter option that applies it. */
const ORDER_WORDS = { asc: 'lowest to highest', desc: 'highest to lowest' } as const;
const SORTER_OPTION = { asc: 'Price: low to high', desc: 'Price: high to low' } as const;
/** A price bucket's link text in the layered navigation (buckets are `[low, high)`). */
const bucketLabel = ([lo, hi]: [number, number]) => `${money(lo)} - ${money(hi - 0.01)}`;

const subcategories = (s: ShoppingState) => s.categories().filter((c) => c.parentId !== null);
const withOptions = (s: ShoppingState) => s.base.seed.catalog.products.filter((p) => p.options.length === 2);

const STREETS = [
  '111 Magnolia Path',
  '456 Oak Avenue',
  '72 Harbor View Rd',
  '9 Elm Court',
  '2300 Sunset Blvd',
  '18 Birch Lane',
  '640 Pine Street',
  '35 Lakeshore Dr',
  '1200 Market St',
  '87 Willow Way',
];
const CITIES: [string, string, string][] = [
  ['Atlanta', 'Georgia', '30303'],
  ['New York', 'New York', '10001'],
  ['Austin', 'Texas', '78701'],
  ['Seattle', 'Washington', '98101'],
  ['Denver', 'Colorado', '80202'],
  ['Portland', 'Oregon', '97201'],
  ['Boston', 'Massachusetts', '02108'],
  ['Chicago', 'Illinois', '60601'],
  ['Miami', 'Florida', '33101'],
  ['Pittsburgh', 'Pennsylvania', '15213'],
];
const SAFE_STATES = new Set(selectable(US_STATES));

function addresses(): { street: string; city: string; state: string; zip: string }[] {
  return STREETS.flatMap((street, i) =>
    CITIES.filter((_, j) => (i + j) % 3 === 0).map(([city, state, zip]) => {
      if (!SAFE_STATES.has(state)) throw new Error(`state ${state} cannot be selected by its name`);
      return { street, city, state, zip };
    }),
  );
}

function addressSteps(a: { street: string; city: string; state: string; zip: string }): OracleStep[] {
  return [type(byId('street_1'), a.street), type(byId('city'), a.city), select(byId('region_id'), a.state), type(byId('zip'), a.zip)];
}

const NEW_REVIEWS: [string, string][] = [
  ['Solid purchase', 'It has held up well after a month of daily use.'],
  ['Pleasantly surprised', 'The finish is nicer than the photos suggest.'],
  ['Not for me', 'The sizing runs small and the seams feel rough.'],
  ['Good gift', 'My sister loved it and uses it every weekend.'],
  ['Okay for the price', 'Works as described although delivery was slow.'],
  ['Exceeded expectations', 'Setup was quick and it feels premium.'],
];
const NICKNAMES = ['Quinn R.', 'Taylor M.', 'Jordan P.', 'Casey L.', 'Morgan K.', 'Riley S.', 'Avery T.'];
const PROBLEMS = [
  'broke after three days of use',
  'arrived with a cracked case',
  'stopped charging after a week',
  'was the wrong color',
  'never worked out of the box',
];

export const SHOPPING_TEMPLATES: TaskTemplate[] = [
  {
    id: 101,
    site: 'shopping',
    intent: 'What is the price of {{product}}?',
    drafts: ({ fresh }) =>
      fresh.shopping.base.seed.catalog.products.map((p) => ({
        params: { product: p.name },
        startUrl: HOME,
        eval: stringMatch({ must_include: [moneyNumber(p.price)] }),
        oracle: [...openProduct(p), exit(money(p.price))],
      })),
  },
  {
    id: 102,
    site: 'shopping',
    intent: 'How many reviews does {{product}} have?',
    drafts: ({ fresh }) =>
      fresh.shopping.base.seed.catalog.products.flatMap((p) => {
        const n = fresh.shopping.productReviews(p.id).length;
        return n > 0
          ? [{ params: { product: p.name }, startUrl: HOME, eval: stringMatch({ must_include: [String(n)] }), oracle: [...openProduct(p), exit(String(n))] }]
          : [];
      }),
  },
  {
    id: 103,
    site: 'shopping',
    intent: 'Who wrote the most recent review of {{product}}?',
    drafts: ({ fresh }) =>
      fresh.shopping.base.seed.catalog.products.flatMap((p) => {
        const [latest, next] = fresh.shopping.productReviews(p.id);
        if (!latest || (next && next.date === latest.date)) return [];
        return [
          {
            params: { product: p.name },
            startUrl: HOME,
            eval: stringMatch({ must_include: [latest.nickname] }),
            oracle: [...openProduct(p), exit(latest.nickname)],
          },
        ];
      }),
  },
  {
    id: 104,
    site: 'shopping',
    intent: 'How much did I pay in total for the order I placed on {{date}}?',
    drafts: ({ fresh }) => {
      const s = fresh.shopping;
      const orders = s.orderHistory();
      return orders
        .filter((o) => orders.filter((x) => x.date.slice(0, 10) === o.date.slice(0, 10)).length === 1)
        .map((o) => ({
          params: { date: longDate(o.date) },
          startUrl: HOME,
          eval: stringMatch({ must_include: [moneyNumber(orderTotal(o))] }),
          oracle: [...openOrders(), ...pageOfOrder(s, o.id), click(byAttr('data-order-id', String(o.id), 'a')), exit(money(orderTotal(o)))],
        }));
    },
  },
  {
    id: 105,
    site: 'shopping',
    intent: 'How many of my orders placed in {{year}} have the status "{{status}}"?',
    heldOut: true,
    drafts: ({ fresh }) => {
      const s = fresh.shopping;
      const orders = s.orderHistory();
      const pages = Math.ceil(orders.length / 10);
      return ['2022', '2023'].flatMap((year) =>
        ['Complete', 'Canceled', 'Processing', 'Pending'].map((status) => {
          const n = orders.filter((o) => o.date.startsWith(year) && o.status === status).length;
          return {
            params: { year, status },
            startUrl: HOME,
            eval: stringMatch({ must_include: [String(n)] }),
            oracle: [
              ...openOrders(),
              ...Array.from({ length: pages - 1 }, (_, i) => click({ tag: 'a', text: String(i + 2), attributes: { class: 'page' } })),
              exit(String(n)),
            ],
          };
        }),
      );
    },
  },
  {
    id: 106,
    site: 'shopping',
    intent: 'Search for "{{query}}"',
    drafts: ({ fresh }) => {
      const queries = new Set<string>();
      for (const p of fresh.shopping.base.seed.catalog.products) {
        const words = p.name.replace(/,.*$/, '').split(' ').slice(1);
        queries.add(words.slice(-2).join(' ').toLowerCase());
      }
      return [...queries]
        .filter((q) => /^[a-z ]+$/.test(q))
        .map((q) => ({
          params: { query: q },
          startUrl: HOME,
          eval: urlMatch(`${HOME}/catalogsearch/result/?${new URLSearchParams({ q }).toString()}`),
          oracle: [search(byId('search'), q), exit(DONE)],
        }));
    },
  },
  {
    id: 107,
    site: 'shopping',
    intent: 'Show me the products in the {{category}} category sorted by price from {{order}}',
    drafts: ({ fresh }) =>
      subcategories(fresh.shopping).flatMap((c) =>
        (['asc', 'desc'] as const).map((dir) => ({
          params: { category: c.name, order: ORDER_WORDS[dir] },
          startUrl: HOME,
          eval: urlMatch(`${HOME}/${c.path}.html?product_list_order=price&product_list_dir=${dir}`),
          oracle: [...openCategory(fresh.shopping, c.id), select(byId('sorter'), SORTER_OPTION[dir]), exit(DONE)],
        })),
      ),
  },
  {
    id: 108,
    site: 'shopping',
    intent: 'Show me {{category}} products priced from {{low}} to {{high}}',
    drafts: ({ fresh }) =>
      subcategories(fresh.shopping).flatMap((c) =>
        PRICE_BUCKETS.filter(([lo, hi]) => fresh.shopping.productsIn(c.id).some((p) => p.price >= lo && p.price < hi)).map(([lo, hi]) => ({
          params: { category: c.name, low: money(lo), high: money(hi - 0.01) },
          startUrl: HOME,
          eval: urlMatch(`${HOME}/${c.path}.html?price=${lo}-${hi}`),
          oracle: [...openCategory(fresh.shopping, c.id), click(link(bucketLabel([lo, hi]))), exit(DONE)],
        })),
      ),
  },
  {
    id: 109,
    site: 'shopping',
    intent: 'Add {{product}} to my wish list',
    drafts: ({ fresh }) =>
      fresh.shopping.base.seed.catalog.products
        .filter((p) => !fresh.shopping.base.seed.wishlist.includes(p.id))
        .map((p) => ({
          params: { product: p.name },
          startUrl: HOME,
          eval: programHtml([
            { url: `${HOME}/wishlist/`, locator: "document.querySelector('.products-grid.wishlist').outerText", required_contents: { must_include: [p.name] } },
          ]),
          oracle: [...openProduct(p), click(button('Add to Wish List')), exit(DONE)],
        })),
  },
  {
    id: 110,
    site: 'shopping',
    intent: 'Add {{qty}} of {{product}} in size {{size}} and color {{color}} to my shopping cart',
    drafts: ({ fresh, rng }) =>
      withOptions(fresh.shopping).map((p) => {
        const size = rng.pick(p.options[0]?.values ?? []);
        const color = rng.pick(p.options[1]?.values ?? []);
        const qty = rng.int(1, 3);
        return {
          params: { qty, product: p.name, size, color },
          startUrl: HOME,
          eval: programHtml([
            {
              url: `${HOME}/checkout/cart/`,
              locator:
                "[...document.querySelectorAll('#shopping-cart-table tr.item-info')].map(r => r.dataset.sku + ' ' + [...r.querySelectorAll('dd')].map(d => d.textContent).join('/') + ' x' + r.querySelector('input.qty').value).join('; ')",
              required_contents: { exact_match: `${p.sku} ${size}/${color} x${qty}` },
            },
          ]),
          oracle: [
            ...openProduct(p),
            select(byId('option-size'), size),
            select(byId('option-color'), color),
            type(byId('qty'), String(qty)),
            click(button('Add to Cart')),
            exit(DONE),
          ],
        };
      }),
  },
  {
    id: 111,
    site: 'shopping',
    intent: 'Buy {{product}} in size {{size}} and color {{color}} and ship it to {{address}}',
    drafts: ({ fresh, rng }) => {
      const places = addresses();
      return withOptions(fresh.shopping).map((p, i) => {
        const a = cycle(places, i);
        const size = rng.pick(p.options[0]?.values ?? []);
        const color = rng.pick(p.options[1]?.values ?? []);
        const order = 'func:shopping_get_latest_order_url()';
        return {
          params: { product: p.name, size, color, address: `${a.street}, ${a.city}, ${a.state} ${a.zip}` },
          startUrl: HOME,
          eval: programHtml([
            {
              url: order,
              locator: 'document.querySelector(".order-details-items.ordered").outerText',
              required_contents: { must_include: [p.sku, `${size}`, color] },
            },
            {
              url: order,
              locator: 'document.querySelector(".box-order-shipping-address .box-content").outerText',
              required_contents: { must_include: [a.street, `${a.city}, ${a.state}, ${a.zip}`] },
            },
          ]),
          oracle: [
            ...openProduct(p),
            select(byId('option-size'), size),
            select(byId('option-color'), color),
            click(button('Add to Cart')),
            click(link('My Cart')),
            click(link('Proceed to Checkout')),
            ...addressSteps(a),
            click(button('Place Order')),
            exit(DONE),
          ],
        };
      });
    },
  },
  {
    id: 112,
    site: 'shopping',
    intent: 'I moved to {{address}}. Update my default shipping and billing address.',
    drafts: () =>
      addresses().map((a) => ({
        params: { address: `${a.street}, ${a.city}, ${a.state}, ${a.zip}` },
        startUrl: HOME,
        eval: programHtml(
          ['shipping', 'billing'].map((kind) => ({
            url: `${HOME}/customer/address/`,
            locator: `document.querySelector(".box.box-address-${kind} > .box-content").outerText`,
            required_contents: { must_include: [a.street, `${a.city}, ${a.state}, ${a.zip}`] },
          })),
        ),
        oracle: [
          click(link('My Account')),
          click(link('Address Book')),
          click(link('Change Shipping Address')),
          ...addressSteps(a),
          click(button('Save Address')),
          exit(DONE),
        ],
      })),
  },
  {
    id: 113,
    site: 'shopping',
    intent: 'Write a {{rating}}-star review of {{product}} as "{{nickname}}" with the summary "{{summary}}" and the review "{{review}}"',
    drafts: ({ fresh, rng }) =>
      fresh.shopping.base.seed.catalog.products.map((p) => {
        const [summary, review] = rng.pick(NEW_REVIEWS);
        const nickname = rng.pick(NICKNAMES);
        const rating = rng.int(1, 5);
        return {
          params: { rating, product: p.name, nickname, summary, review },
          startUrl: HOME,
          eval: programHtml([
            {
              url: `${HOME}/${p.urlKey}.html`,
              locator: "document.querySelector('#customer-reviews').outerText",
              required_contents: { must_include: [summary, review, nickname] },
            },
            {
              url: `${HOME}/${p.urlKey}.html`,
              locator: "document.querySelector('#customer-reviews .review-item .rating-result').getAttribute('title')",
              required_contents: { exact_match: `${rating * 20}%` },
            },
          ]),
          oracle: [
            ...openProduct(p),
            click(link('Add Your Review')),
            click(byId(`Rating_${rating}`)),
            type(byId('nickname_field'), nickname),
            type(byId('summary_field'), summary),
            type(byId('review_field'), review),
            click(button('Submit Review')),
            exit(DONE),
          ],
        };
      }),
  },
  {
    id: 114,
    site: 'shopping',
    intent: 'Draft a refund request in the "Contact Us" form for order #{{order}}: the {{product}} {{problem}}. Do not send it yet.',
    heldOut: true,
    drafts: ({ fresh }) =>
      fresh.shopping
        .orderHistory()
        .filter((o) => o.status === 'Complete')
        .map((o, i) => {
          const line = o.lines[0];
          const problem = cycle(PROBLEMS, i);
          const number = orderNumber(o.id);
          return {
            params: { order: number, product: line?.name ?? '', problem },
            startUrl: HOME,
            eval: programHtml([
              {
                url: 'last',
                locator: `document.querySelector('[title="What’s on your mind?"]').value`,
                required_contents: { fuzzy_match: ['refund', number, problem] },
              },
            ]),
            oracle: [
              click(link('Contact Us')),
              type(byId('comment'), `Hello, I would like a refund for order #${number}. The ${line?.name ?? 'item'} ${problem}.`),
              exit(DONE),
            ],
          };
        }),
  },
  {
    id: 115,
    site: 'shopping',
    intent: 'What is the cheapest product in the {{category}} category?',
    heldOut: true,
    drafts: ({ fresh }) =>
      subcategories(fresh.shopping).flatMap((c) => {
        const [first, second] = sortProducts(fresh.shopping.productsIn(c.id), 'price', 'asc');
        if (!first || (second && second.price === first.price)) return [];
        return [
          {
            params: { category: c.name },
            startUrl: HOME,
            eval: stringMatch({ must_include: [first.name] }),
            oracle: [...openCategory(fresh.shopping, c.id), select(byId('sorter'), 'Price: low to high'), exit(first.name)],
          },
        ];
      }),
  },
  {
    id: 116,
    site: 'shopping',
    intent: 'Show me {{category}} products priced from {{low}} to {{high}}, sorted by price from {{order}}',
    composes: [107, 108],
    // The sorter's URLs keep the price filter and the bucket links keep the sort, so either order of
    // steps lands on `?product_list_order=price&product_list_dir=D&price=L-H`; one reference URL
    // then requires both constraints. Buckets with a single product would make the sort moot.
    drafts: ({ fresh }) =>
      subcategories(fresh.shopping).flatMap((c) =>
        PRICE_BUCKETS.filter(([lo, hi]) => fresh.shopping.productsIn(c.id).filter((p) => p.price >= lo && p.price < hi).length >= 2).flatMap(([lo, hi]) =>
          (['asc', 'desc'] as const).map((dir) => ({
            params: { category: c.name, low: money(lo), high: money(hi - 0.01), order: ORDER_WORDS[dir] },
            startUrl: HOME,
            eval: urlMatch(`${HOME}/${c.path}.html?product_list_order=price&product_list_dir=${dir}&price=${lo}-${hi}`),
            oracle: [...openCategory(fresh.shopping, c.id), click(link(bucketLabel([lo, hi]))), select(byId('sorter'), SORTER_OPTION[dir]), exit(DONE)],
          })),
        ),
      ),
  },
];
