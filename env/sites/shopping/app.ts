/**
 * The storefront (modelled on WebArena's One Stop Market, a Magento shop): search, categories with
 * layered navigation and sorting, product pages with options and reviews, cart, checkout, order
 * history, wish list, address book, newsletter and contact form. Class names and ids follow
 * Magento's, which WebArena's evaluators select on.
 */
import { html, type Html } from '../../html';
import { intParam, notFound, pageNumber, redirect, Router, type RequestContext } from '../../http/router';
import type { SiteApp } from '../../http/siteServer';
import { longDate, money, paginate, shortDate, US_STATES, withQuery } from '../common';
import type { Product } from './catalog';
import { orderNumber, orderSubtotal, orderTotal, type Address, type Order } from './data';
import { addRestRoutes, STOREFRONT_REST, type ShopAdminCredentials } from './rest';
import { PRICE_BUCKETS, ShoppingState, sortProducts, type ShoppingBase, type SortKey } from './state';

type Ctx = RequestContext<ShoppingState>;

const STYLE = `body{font-family:Arial,sans-serif;margin:0;color:#333}a{color:#006bb4}
.panel.header{background:#f0f0f0;padding:4px 20px;display:flex;justify-content:space-between;font-size:13px}
.header.links{list-style:none;display:flex;gap:14px;margin:0;padding:0}
.header.content{display:flex;align-items:center;gap:24px;padding:12px 20px}.logo{font-size:24px;font-weight:bold;text-decoration:none;color:#c0392b}
#search{width:380px;padding:6px}.navigation{background:#f5f5f5;border-top:1px solid #ddd;border-bottom:1px solid #ddd}
.navigation ul{list-style:none;display:flex;gap:22px;margin:0;padding:10px 20px;font-weight:bold}
.columns{display:flex;gap:24px;padding:16px 20px}.sidebar{width:230px;flex:none}.column.main{flex:1;min-width:0}
.product-items{list-style:none;padding:0;display:grid;grid-template-columns:repeat(4,1fr);gap:14px}
.product-item{border:1px solid #eee;padding:8px;font-size:13px}
.product-item-link,.product-item-name{display:inline-block}.price{font-weight:bold}
table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:6px 8px;text-align:left;font-size:13px}
.message{background:#e5efe5;padding:8px 20px;color:#006400}.page-footer{background:#f4f4f4;padding:16px 20px;margin-top:24px;font-size:13px}
.page-footer ul{list-style:none;display:flex;flex-wrap:wrap;gap:16px;padding:0}.field{margin:6px 0}label{display:inline-block;min-width:120px}
.pages-items{list-style:none;display:flex;gap:8px;padding:0}`;

function layout(s: ShoppingState, title: string, main: Html, sidebar?: Html): Html {
  const tops = s.categories().filter((c) => c.parentId === null);
  const flash = s.takeFlash();
  return html`<!DOCTYPE html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <title>${title}</title>
        <style>
          ${STYLE}
        </style>
      </head>
      <body>
        <header class="page-header">
          <div class="panel header">
            <span class="greet welcome">Welcome, ${s.customer.firstName} ${s.customer.lastName}!</span>
            <ul class="header links">
              <li><a href="/customer/account/">My Account</a></li>
              <li><a href="/wishlist/">My Wish List</a></li>
              <li><a href="/contact/">Contact Us</a></li>
              <li><a href="/customer/account/logout/">Sign Out</a></li>
            </ul>
          </div>
          <div class="header content">
            <a class="logo" href="/" title="One Stop Market">One Stop Market</a>
            <form id="search_mini_form" action="/catalogsearch/result/" method="get">
              <input id="search" type="text" name="q" placeholder="Search entire store here..." autocomplete="off" />
              <button type="submit" title="Search">Search</button>
            </form>
            <a class="action showcart" href="/checkout/cart/">My Cart <span class="counter-number">${s.cartCount()}</span></a>
          </div>
        </header>
        <nav class="navigation">
          <ul>
            ${tops.map((c) => html`<li><a href="/${c.path}.html">${c.name}</a></li>`)}
          </ul>
        </nav>
        ${flash ? html`<div class="message message-success success" role="alert">${flash}</div>` : ''}
        <div class="columns" id="maincontent">
          ${sidebar ? html`<aside class="sidebar sidebar-main">${sidebar}</aside>` : ''}
          <div class="column main">${main}</div>
        </div>
        <footer class="page-footer">
          <ul>
            <li><a href="/about-us/">About us</a></li>
            <li><a href="/customer-service/">Customer Service</a></li>
            <li><a href="/contact/">Contact Us</a></li>
            <li><a href="/privacy-policy/">Privacy and Cookie Policy</a></li>
            <li><a href="/search/term/popular/">Search Terms</a></li>
            <li><a href="/catalogsearch/advanced/">Advanced Search</a></li>
            <li><a href="/sales/guest/form/">Orders and Returns</a></li>
          </ul>
          <p>Copyright © 2013-present Magento, Inc. All rights reserved.</p>
        </footer>
      </body>
    </html>`;
}

function accountSidebar(current: string): Html {
  const links: [string, string][] = [
    ['/customer/account/', 'My Account'],
    ['/sales/order/history/', 'My Orders'],
    ['/wishlist/', 'My Wish List'],
    ['/customer/address/', 'Address Book'],
    ['/customer/account/edit/', 'Account Information'],
    ['/review/customer/', 'My Product Reviews'],
    ['/newsletter/manage/', 'Newsletter Subscriptions'],
  ];
  return html`<div class="block account-nav">
    <ul class="nav items">
      ${links.map(([href, label]) =>
        href === current ? html`<li class="nav item current"><strong>${label}</strong></li>` : html`<li class="nav item"><a href="${href}">${label}</a></li>`,
      )}
    </ul>
  </div>`;
}

function stars(percent: number): Html {
  return html`<div class="rating-summary">
    <div class="rating-result" title="${percent}%"><span>${percent}%</span></div>
  </div>`;
}

function productCard(s: ShoppingState, p: Product): Html {
  const count = s.productReviews(p.id).length;
  return html`<li class="item product product-item">
    <div class="product-item-info">
      <a class="product-item-link" href="/${p.urlKey}.html">${p.name}</a>
      <div class="price-box"><span class="price">${money(p.price)}</span></div>
      ${count ? html`${stars(s.ratingPercent(p.id))}<span class="reviews-actions">${count} ${count === 1 ? 'Review' : 'Reviews'}</span>` : ''}
    </div>
  </li>`;
}

const SORT_OPTIONS: [SortKey, 'asc' | 'desc', string][] = [
  ['position', 'asc', 'Position'],
  ['name', 'asc', 'Product Name'],
  ['price', 'asc', 'Price: low to high'],
  ['price', 'desc', 'Price: high to low'],
];
const PER_PAGE = 12;

/** Product grid with toolbar (count, sorter) and pager; the sorter navigates on change. */
function productList(s: ShoppingState, ctx: Ctx, path: string, products: Product[], fixed: Record<string, string>): Html {
  const order = (ctx.query.get('product_list_order') ?? 'position') as SortKey;
  const dir = ctx.query.get('product_list_dir') === 'desc' ? 'desc' : 'asc';
  const sorted = sortProducts(products, ['name', 'price', 'position', 'relevance'].includes(order) ? order : 'position', dir);
  const { items, pages, page } = paginate(sorted, pageNumber(ctx.query), PER_PAGE);
  const sortUrl = (key: string, d: string) => {
    const q = new URLSearchParams(fixed);
    q.set('product_list_order', key);
    q.set('product_list_dir', d);
    for (const [k, v] of ctx.query) if (!q.has(k) && k !== 'p') q.set(k, v);
    return `${path}?${q.toString()}`;
  };
  const first = sorted.length ? (page - 1) * PER_PAGE + 1 : 0;
  return html`<div class="toolbar toolbar-products">
      <p class="toolbar-amount" id="toolbar-amount">Items ${first}-${(page - 1) * PER_PAGE + items.length} of ${sorted.length}</p>
      <div class="toolbar-sorter sorter">
        <label class="sorter-label" for="sorter">Sort By</label>
        <select id="sorter" data-role="sorter" class="sorter-options" onchange="window.location.href=this.value">
          ${SORT_OPTIONS.map(([key, d, label]) => html`<option value="${sortUrl(key, d)}" ${key === order && d === dir ? 'selected' : ''}>${label}</option>`)}
        </select>
      </div>
    </div>
    ${
      items.length
        ? html`<ol class="products list items product-items">
            ${items.map((p) => productCard(s, p))}
          </ol>`
        : html`<div class="message info empty">Your search returned no results.</div>`
    }
    ${
      pages > 1
        ? html`<div class="pages">
            <ul class="items pages-items">
              ${Array.from({ length: pages }, (_, i) => i + 1).map((n) =>
                n === page
                  ? html`<li class="item current"><strong class="page">${n}</strong></li>`
                  : html`<li class="item"><a class="page" href="${withQuery(path, ctx.query, { p: String(n) })}">${n}</a></li>`,
              )}${page < pages ? html`<li class="item pages-item-next"><a class="action next" href="${withQuery(path, ctx.query, { p: String(page + 1) })}" title="Next">Next</a></li>` : ''}
            </ul>
          </div>`
        : ''
    }`;
}

function home(ctx: Ctx): Html {
  const s = ctx.state;
  const featured = s.base.seed.catalog.products.filter((_, i) => i % 23 === 0).slice(0, 12);
  return layout(
    s,
    'One Stop Market',
    html`<h1 class="page-title">One Stop Market</h1>
      <p>Product Showcases</p>
      <ol class="products list items product-items">
        ${featured.map((p) => productCard(s, p))}
      </ol>`,
  );
}

function searchResults(ctx: Ctx): Html {
  const s = ctx.state;
  const q = ctx.query.get('q') ?? '';
  return layout(
    s,
    `Search results for: '${q}'`,
    html`<h1 class="page-title">Search results for: '${q}'</h1>
      ${productList(s, ctx, '/catalogsearch/result/', s.search(q), { q })}`,
  );
}

function categoryPage(ctx: Ctx, path: string): Html {
  const s = ctx.state;
  const category = s.categoryByPath(path) ?? notFound(`category ${path}`);
  let products = s.productsIn(category.id);
  const price = /^(\d+)-(\d+)$/.exec(ctx.query.get('price') ?? '');
  if (price) products = products.filter((p) => p.price >= Number(price[1]) && p.price < Number(price[2]));
  const children = s.children(category.id);
  const parent = category.parentId === null ? undefined : s.category(category.parentId);
  const here = `/${category.path}.html`;
  const sidebar = html`<div class="block filter">
    <strong class="block-title">Shop By</strong>
    ${
      parent
        ? html`<div class="filter-options-item">
            <div class="filter-options-title">Parent Category</div>
            <a href="/${parent.path}.html">${parent.name}</a>
          </div>`
        : ''
    }
    ${
      children.length
        ? html`<div class="filter-options-item">
            <div class="filter-options-title">Category</div>
            <ol class="items">
              ${children.map((c) => html`<li class="item"><a href="/${c.path}.html">${c.name}</a> <span class="count">${s.productsIn(c.id).length}</span></li>`)}
            </ol>
          </div>`
        : ''
    }
    <div class="filter-options-item">
      <div class="filter-options-title">Price</div>
      <ol class="items">
        ${PRICE_BUCKETS.map(([lo, hi]) => html`<li class="item"><a href="${withQuery(here, ctx.query, { price: `${lo}-${hi}`, p: null })}">${money(lo)} - ${money(hi - 0.01)}</a></li>`)}
      </ol>
    </div>
  </div>`;
  return layout(
    s,
    category.name,
    html`<h1 class="page-title">${category.name}</h1>
      ${productList(s, ctx, here, products, {})}`,
    sidebar,
  );
}

function productPage(ctx: Ctx, p: Product): Html {
  const s = ctx.state;
  const reviews = s.productReviews(p.id);
  const category = s.category(p.categoryId);
  return layout(
    s,
    p.name,
    html`<div class="breadcrumbs"><a href="/">Home</a> › ${category ? html`<a href="/${category.path}.html">${category.name}</a>` : ''}</div>
      <div class="product-info-main">
        <h1 class="page-title"><span class="base" data-ui-id="page-title-wrapper" itemprop="name">${p.name}</span></h1>
        <div class="product-reviews-summary">
          ${reviews.length ? html`${stars(s.ratingPercent(p.id))}<a class="action view" href="#reviews">${reviews.length} ${reviews.length === 1 ? 'Review' : 'Reviews'}</a>` : ''}
          <a class="action add" href="#review-form">Add Your Review</a>
        </div>
        <div class="product-info-price">
          <div class="price-box price-final_price">
            <span class="price-container"><span class="price">${money(p.price)}</span></span>
          </div>
        </div>
        <div class="product-info-stock-sku">
          <div class="stock ${p.inStock ? 'available' : 'unavailable'}"><span>${p.inStock ? 'In stock' : 'Out of stock'}</span></div>
          <div class="product attribute sku">
            <strong class="type">SKU</strong>
            <div class="value" itemprop="sku">${p.sku}</div>
          </div>
        </div>
        <form id="product_addtocart_form" method="post" action="/checkout/cart/add/">
          <input type="hidden" name="product" value="${p.id}" />
          ${p.options.map(
            (o) =>
              html`<div class="field configurable required">
                <label for="option-${o.label.toLowerCase()}">${o.label}</label>
                <select name="super_attribute[${o.label.toLowerCase()}]" id="option-${o.label.toLowerCase()}" required>
                  <option value="">Pick one</option>
                  ${o.values.map((v) => html`<option value="${v}">${v}</option>`)}
                </select>
              </div>`,
          )}
          <div class="field qty"><label for="qty">Qty</label><input type="number" name="qty" id="qty" min="1" value="1" title="Qty" /></div>
          <button type="submit" title="Add to Cart" id="product-addtocart-button">Add to Cart</button>
        </form>
        <form method="post" action="/wishlist/index/add/">
          <input type="hidden" name="product" value="${p.id}" /><button type="submit" class="action towishlist" title="Add to Wish List">
            Add to Wish List
          </button>
        </form>
      </div>
      <div class="product info detailed">
        <div class="data item title" id="tab-label-description"><strong>Details</strong></div>
        <div class="data item content" id="description">
          <div class="product attribute description"><div class="value">${p.description}</div></div>
        </div>
        <div class="data item title" id="tab-label-reviews-title"><strong>Reviews ${reviews.length}</strong></div>
        <div id="reviews">
          <ol class="items review-items" id="customer-reviews">
            ${reviews.map(
              (r) =>
                html`<li class="item review-item">
                  <div class="review-title">${r.summary}</div>
                  <div class="review-ratings"><span class="rating-label">Rating</span> ${stars(r.rating * 20)}</div>
                  <div class="review-content">${r.text}</div>
                  <div class="review-details">
                    <p class="review-author"><span class="review-details-label">Review by</span> <strong class="review-details-value">${r.nickname}</strong></p>
                    <p class="review-date">
                      <span class="review-details-label">Posted on</span> <time class="review-details-value">${shortDate(r.date)}</time>
                    </p>
                  </div>
                </li>`,
            )}
          </ol>
        </div>
        <form id="review-form" method="post" action="/review/product/post/id/${p.id}/">
          <fieldset>
            <legend>You're reviewing: ${p.name}</legend>
            <div class="field">
              <span>Your Rating</span>
              ${[1, 2, 3, 4, 5].map((n) => html`<input type="radio" name="rating" value="${n}" id="Rating_${n}" title="${n} stars" /> <label for="Rating_${n}">${n} stars</label> `)}
            </div>
            <div class="field"><label for="nickname_field">Nickname</label><input type="text" name="nickname" id="nickname_field" required /></div>
            <div class="field"><label for="summary_field">Summary</label><input type="text" name="title" id="summary_field" required /></div>
            <div class="field"><label for="review_field">Review</label><textarea name="detail" id="review_field" rows="3" required></textarea></div>
            <button type="submit" class="action submit primary">Submit Review</button>
          </fieldset>
        </form>
      </div>`,
  );
}

function catchAll(ctx: Ctx): Html {
  const path = ctx.path.slice(1);
  if (!path.endsWith('.html')) notFound(`page /${path}`);
  const key = path.slice(0, -'.html'.length);
  const product = ctx.state.base.productsByKey.get(key);
  if (product) return productPage(ctx, product);
  return categoryPage(ctx, key);
}

function optionsOf(form: URLSearchParams, product: Product): Record<string, string> | undefined {
  const chosen: Record<string, string> = {};
  for (const option of product.options) {
    const value = form.get(`super_attribute[${option.label.toLowerCase()}]`) ?? '';
    if (!option.values.includes(value)) return undefined;
    chosen[option.label] = value;
  }
  return chosen;
}

function addToCart(ctx: Ctx) {
  const s = ctx.state;
  const product = s.product(Number(ctx.form.get('product'))) ?? notFound('product');
  const options = optionsOf(ctx.form, product);
  if (!options) {
    s.flash = 'You need to choose options for your item.';
    return redirect(`/${product.urlKey}.html`);
  }
  const qty = Math.max(1, Math.floor(Number(ctx.form.get('qty') ?? '1')) || 1);
  const same = s.cart.find((l) => l.productId === product.id && JSON.stringify(l.options) === JSON.stringify(options));
  if (same) s.cart.update(same.id, (l) => ({ ...l, qty: l.qty + qty }));
  else {
    const id = s.cart.allocateId();
    s.cart.set(id, { id, productId: product.id, qty, options });
  }
  s.flash = `You added ${product.name} to your shopping cart.`;
  return redirect(`/${product.urlKey}.html`);
}

function optionList(options: Record<string, string>): Html {
  const entries = Object.entries(options);
  return entries.length
    ? html`<dl class="item-options">
        ${entries.map(
          ([k, v]) =>
            html`<dt>${k}</dt>
              <dd>${v}</dd>`,
        )}
      </dl>`
    : html``;
}

function cartPage(ctx: Ctx): Html {
  const s = ctx.state;
  const lines = s.cartLines();
  if (lines.length === 0)
    return layout(
      s,
      'Shopping Cart',
      html`<h1 class="page-title">Shopping Cart</h1>
        <div class="cart-empty">
          <p>You have no items in your shopping cart.</p>
          <p>Click <a href="/">here</a> to continue shopping.</p>
        </div>`,
    );
  return layout(
    s,
    'Shopping Cart',
    html`<h1 class="page-title">Shopping Cart</h1>
      <form method="post" action="/checkout/cart/updatePost/">
        <table id="shopping-cart-table" class="cart items data table">
          <thead>
            <tr>
              <th>Item</th>
              <th>Price</th>
              <th>Qty</th>
              <th>Subtotal</th>
              <th></th>
            </tr>
          </thead>
          ${lines.map((l) => {
            const p = s.product(l.productId);
            if (!p) return '';
            return html`<tbody class="cart item">
              <tr class="item-info" data-sku="${p.sku}">
                <td class="col item"><a class="product-item-name" href="/${p.urlKey}.html">${p.name}</a>${optionList(l.options)}</td>
                <td class="col price">${money(p.price)}</td>
                <td class="col qty"><input type="number" name="cart[${l.id}][qty]" class="input-text qty" value="${l.qty}" title="Qty" /></td>
                <td class="col subtotal">${money(p.price * l.qty)}</td>
                <td><button type="submit" name="remove" value="${l.id}" class="action action-delete" title="Remove item">Remove item</button></td>
              </tr>
            </tbody>`;
          })}
        </table>
        <button type="submit" name="update_cart_action" value="update_qty" title="Update Shopping Cart">Update Shopping Cart</button>
      </form>
      <div class="cart-summary">
        <strong class="summary title">Summary</strong>
        <table class="totals">
          <tr>
            <th>Subtotal</th>
            <td>${money(s.cartSubtotal())}</td>
          </tr>
          <tr>
            <th>Shipping (Flat Rate)</th>
            <td>${money(s.cartShipping())}</td>
          </tr>
          <tr class="grand totals">
            <th>Order Total</th>
            <td>${money(s.cartSubtotal() + s.cartShipping())}</td>
          </tr>
        </table>
        <a href="/checkout/" class="action primary checkout" title="Proceed to Checkout">Proceed to Checkout</a>
      </div>`,
  );
}

function updateCart(ctx: Ctx) {
  const s = ctx.state;
  const remove = ctx.form.get('remove');
  if (remove) s.cart.delete(Number(remove));
  else {
    for (const line of s.cartLines()) {
      const qty = Math.floor(Number(ctx.form.get(`cart[${line.id}][qty]`) ?? line.qty));
      if (qty <= 0) s.cart.delete(line.id);
      else s.cart.update(line.id, (l) => ({ ...l, qty }));
    }
  }
  return redirect('/checkout/cart/');
}

function addressFields(a: Address): Html {
  return html`<div class="field"><label for="firstname">First Name</label><input type="text" id="firstname" name="firstname" value="${a.firstName}" /></div>
    <div class="field"><label for="lastname">Last Name</label><input type="text" id="lastname" name="lastname" value="${a.lastName}" /></div>
    <div class="field">
      <label for="street_1">Street Address</label><input type="text" id="street_1" name="street[0]" value="${a.street}" title="Street Address" />
    </div>
    <div class="field"><label for="city">City</label><input type="text" id="city" name="city" value="${a.city}" title="City" /></div>
    <div class="field">
      <label for="region_id">State/Province</label
      ><select id="region_id" name="region_id" title="State/Province">
        ${US_STATES.map((st) => html`<option value="${st}" ${st === a.state ? 'selected' : ''}>${st}</option>`)}
      </select>
    </div>
    <div class="field"><label for="zip">Zip/Postal Code</label><input type="text" id="zip" name="postcode" value="${a.zip}" title="Zip/Postal Code" /></div>
    <div class="field">
      <label for="country">Country</label
      ><select id="country" name="country_id">
        <option value="US" selected>United States</option>
      </select>
    </div>
    <div class="field">
      <label for="telephone">Phone Number</label><input type="text" id="telephone" name="telephone" value="${a.phone}" title="Phone Number" />
    </div>`;
}

function addressFromForm(form: URLSearchParams, fallback: Address): Address {
  const get = (key: string, current: string) => (form.get(key) ?? current).trim() || current;
  const state = form.get('region_id') ?? fallback.state;
  return {
    firstName: get('firstname', fallback.firstName),
    lastName: get('lastname', fallback.lastName),
    street: get('street[0]', fallback.street),
    city: get('city', fallback.city),
    state: US_STATES.includes(state) ? state : fallback.state,
    zip: get('postcode', fallback.zip),
    country: 'United States',
    phone: get('telephone', fallback.phone),
  };
}

function checkoutPage(ctx: Ctx) {
  const s = ctx.state;
  if (s.cartLines().length === 0) return redirect('/checkout/cart/');
  // As in Magento's one-page checkout, the summary and the Place Order button sit beside the form.
  return layout(
    s,
    'Checkout',
    html`<h1 class="page-title">Checkout</h1>
      <form id="co-shipping-form" method="post" action="/checkout/placeOrder/" style="display:flex;gap:32px">
        <div class="opc-wrapper">
          <div class="step-title">Shipping Address</div>
          ${addressFields(s.address)}
          <div class="step-title">Shipping Methods</div>
          <div class="field">
            <input type="radio" name="shipping_method" value="flatrate" id="s_method_flatrate" checked />
            <label for="s_method_flatrate">${money(s.cartShipping())} Flat Rate</label>
          </div>
          <div class="step-title">Payment Method</div>
          <div class="field">
            <input type="radio" name="payment_method" value="checkmo" id="checkmo" checked /> <label for="checkmo">Check / Money order</label>
          </div>
        </div>
        <div class="opc-sidebar">
          <div class="opc-block-summary">
            <strong>Order Summary</strong>
            <p>${s.cartCount()} Items in Cart</p>
            <p>Order Total ${money(s.cartSubtotal() + s.cartShipping())}</p>
          </div>
          <button type="submit" class="action primary checkout" title="Place Order">Place Order</button>
        </div>
      </form>`,
  );
}

function placeOrder(ctx: Ctx) {
  const s = ctx.state;
  const lines = s.cartLines();
  if (lines.length === 0) return redirect('/checkout/cart/');
  const address = addressFromForm(ctx.form, s.address);
  const id = s.orders.allocateId();
  const order: Order = {
    id,
    date: s.clock.now(),
    status: 'Pending',
    address,
    shipping: s.cartShipping(),
    lines: lines.flatMap((l) => {
      const p = s.product(l.productId);
      return p ? [{ productId: p.id, name: p.name, sku: p.sku, price: p.price, qty: l.qty, options: l.options }] : [];
    }),
  };
  s.orders.set(id, order);
  for (const line of lines) s.cart.delete(line.id);
  return redirect(`/checkout/onepage/success/?order_id=${id}`);
}

function successPage(ctx: Ctx): Html {
  const id = Number(ctx.query.get('order_id'));
  return layout(
    ctx.state,
    'Success Page',
    html`<h1 class="page-title">Thank you for your purchase!</h1>
      <div class="checkout-success">
        <p>Your order number is: <a class="order-number" href="/sales/order/view/order_id/${id}/">${orderNumber(id)}</a>.</p>
        <p>We'll email you an order confirmation with details and tracking info.</p>
        <a class="action primary continue" href="/">Continue Shopping</a>
      </div>`,
  );
}

function historyPage(ctx: Ctx): Html {
  const s = ctx.state;
  const { items, pages, page } = paginate(s.orderHistory(), pageNumber(ctx.query), 10);
  return layout(
    s,
    'My Orders',
    html`<h1 class="page-title">My Orders</h1>
      <table class="data table table-order-items history" id="my-orders-table">
        <thead>
          <tr>
            <th>Order #</th>
            <th>Date</th>
            <th>Ship To</th>
            <th>Order Total</th>
            <th>Status</th>
            <th>Action</th>
          </tr>
        </thead>
        <tbody>
          ${items.map(
            (o) =>
              html`<tr>
                <td class="col id">${orderNumber(o.id)}</td>
                <td class="col date">${shortDate(o.date)}</td>
                <td class="col shipping">${o.address.firstName} ${o.address.lastName}</td>
                <td class="col total"><span class="price">${money(orderTotal(o))}</span></td>
                <td class="col status">${o.status}</td>
                <td class="col actions"><a href="/sales/order/view/order_id/${o.id}/" class="action view" data-order-id="${o.id}">View Order</a></td>
              </tr>`,
          )}
        </tbody>
      </table>
      <div class="order-products-toolbar toolbar">
        <p class="toolbar-amount">Page ${page} of ${pages}</p>
        <ul class="items pages-items">
          ${Array.from({ length: pages }, (_, i) => i + 1).map((n) =>
            n === page
              ? html`<li class="item current"><strong class="page">${n}</strong></li>`
              : html`<li class="item"><a class="page" href="/sales/order/history/?p=${n}">${n}</a></li>`,
          )}
        </ul>
      </div>`,
    accountSidebar('/sales/order/history/'),
  );
}

function addressBox(a: Address): Html {
  return html`${a.firstName} ${a.lastName}<br />${a.street}<br />${a.city}, ${a.state}, ${a.zip}<br />${a.country}<br />T:
    <a href="tel:${a.phone}">${a.phone}</a>`;
}

function orderPage(ctx: Ctx): Html {
  const s = ctx.state;
  const order = s.orders.get(intParam(ctx.params, 'id')) ?? notFound('order');
  return layout(
    s,
    `Order # ${orderNumber(order.id)}`,
    html`<h1 class="page-title">Order # ${orderNumber(order.id)}</h1>
      <span class="order-status">${order.status}</span>
      <div class="order-date">Order Date: <span>${longDate(order.date)}</span></div>
      <form method="post" action="/sales/order/reorder/order_id/${order.id}/"><button type="submit" class="action order">Reorder</button></form>
      <div class="order-details-items ordered">
        <strong class="order-title">Items Ordered</strong>
        <table class="data table table-order-items" id="my-orders-table">
          <thead>
            <tr>
              <th>Product Name</th>
              <th>SKU</th>
              <th>Price</th>
              <th>Qty</th>
              <th>Subtotal</th>
            </tr>
          </thead>
          ${order.lines.map(
            (l) =>
              html`<tbody>
                <tr>
                  <td class="col name"><strong class="product name product-item-name">${l.name}</strong>${optionList(l.options)}</td>
                  <td class="col sku">${l.sku}</td>
                  <td class="col price">${money(l.price)}</td>
                  <td class="col qty">Ordered ${l.qty}</td>
                  <td class="col subtotal">${money(l.price * l.qty)}</td>
                </tr>
              </tbody>`,
          )}
          <tfoot>
            <tr class="subtotal">
              <th colspan="4">Subtotal</th>
              <td>${money(orderSubtotal(order))}</td>
            </tr>
            <tr class="shipping">
              <th colspan="4">Shipping &amp; Handling</th>
              <td>${money(order.shipping)}</td>
            </tr>
            <tr class="grand_total">
              <th colspan="4">Grand Total</th>
              <td><strong>${money(orderTotal(order))}</strong></td>
            </tr>
          </tfoot>
        </table>
      </div>
      <div class="block block-order-details-view">
        <strong>Order Information</strong>
        <div class="box box-order-shipping-address">
          <strong class="box-title">Shipping Address</strong>
          <address class="box-content">${addressBox(order.address)}</address>
        </div>
        <div class="box box-order-shipping-method">
          <strong class="box-title">Shipping Method</strong>
          <div class="box-content">Flat Rate - Fixed</div>
        </div>
      </div>`,
    accountSidebar('/sales/order/history/'),
  );
}

function reorder(ctx: Ctx) {
  const s = ctx.state;
  const order = s.orders.get(intParam(ctx.params, 'id')) ?? notFound('order');
  for (const line of order.lines) {
    const id = s.cart.allocateId();
    s.cart.set(id, { id, productId: line.productId, qty: line.qty, options: line.options });
  }
  return redirect('/checkout/cart/');
}

function wishlistPage(ctx: Ctx): Html {
  const s = ctx.state;
  const items = s.wishlist.all();
  return layout(
    s,
    'My Wish List',
    html`<h1 class="page-title">My Wish List</h1>
      ${
        items.length
          ? html`<div class="products-grid wishlist">
              <ol class="product-items">
                ${items.map((w) => {
                  const p = s.product(w.productId);
                  return p
                    ? html`<li class="product-item">
                        <a class="product-item-link" href="/${p.urlKey}.html">${p.name}</a> <span class="price">${money(p.price)}</span>
                        <form method="post" action="/wishlist/index/remove/">
                          <input type="hidden" name="item" value="${w.id}" /><button type="submit" class="action delete" title="Remove This Item">
                            Remove item
                          </button>
                        </form>
                      </li>`
                    : '';
                })}
              </ol>
            </div>`
          : html`<div class="message info empty">You have no items in your wish list.</div>`
      }`,
    accountSidebar('/wishlist/'),
  );
}

function accountPage(ctx: Ctx): Html {
  const s = ctx.state;
  const recent = s.orderHistory().slice(0, 5);
  return layout(
    s,
    'My Account',
    html`<h1 class="page-title">My Account</h1>
      <div class="block block-dashboard-info">
        <strong class="block-title">Account Information</strong>
        <div class="box box-information">
          <strong class="box-title">Contact Information</strong>
          <p class="box-content">${s.customer.firstName} ${s.customer.lastName}<br />${s.customer.email}</p>
          <a href="/customer/account/edit/">Edit</a>
        </div>
        <div class="box box-newsletter">
          <strong class="box-title">Newsletters</strong>
          <p class="box-content">${s.newsletter ? 'You are subscribed to "General Subscription".' : "You aren't subscribed to our newsletter."}</p>
          <a href="/newsletter/manage/">Edit</a>
        </div>
      </div>
      <div class="block block-dashboard-addresses">
        <strong class="block-title">Address Book</strong> <a href="/customer/address/">Manage Addresses</a>
        <div class="box box-billing-address">
          <strong class="box-title">Default Billing Address</strong>
          <address class="box-content">${addressBox(s.address)}</address>
        </div>
      </div>
      <div class="block block-dashboard-orders">
        <strong class="block-title">Recent Orders</strong> <a href="/sales/order/history/">View All</a>
        <table class="data table">
          <tbody>
            ${recent.map(
              (o) =>
                html`<tr>
                  <td>${orderNumber(o.id)}</td>
                  <td>${shortDate(o.date)}</td>
                  <td>${money(orderTotal(o))}</td>
                  <td>${o.status}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>`,
    accountSidebar('/customer/account/'),
  );
}

function addressBook(ctx: Ctx): Html {
  const s = ctx.state;
  return layout(
    s,
    'Address Book',
    html`<h1 class="page-title">Address Book</h1>
      <div class="block block-addresses-default">
        <strong class="block-title">Default Addresses</strong>
        <div class="box box-address-billing">
          <strong class="box-title">Default Billing Address</strong>
          <address class="box-content">${addressBox(s.address)}</address>
          <a class="action edit" href="/customer/address/edit/">Change Billing Address</a>
        </div>
        <div class="box box-address-shipping">
          <strong class="box-title">Default Shipping Address</strong>
          <address class="box-content">${addressBox(s.address)}</address>
          <a class="action edit" href="/customer/address/edit/">Change Shipping Address</a>
        </div>
      </div>`,
    accountSidebar('/customer/address/'),
  );
}

function addressEdit(ctx: Ctx): Html {
  const s = ctx.state;
  return layout(
    s,
    'Edit Address',
    html`<h1 class="page-title">Edit Address</h1>
      <form class="form-address-edit" method="post" action="/customer/address/formPost/">
        ${addressFields(s.address)} <button type="submit" class="action save primary" title="Save Address">Save Address</button>
      </form>`,
    accountSidebar('/customer/address/'),
  );
}

function newsletterPage(ctx: Ctx): Html {
  const s = ctx.state;
  return layout(
    s,
    'Newsletter Subscription',
    html`<h1 class="page-title">Newsletter Subscription</h1>
      <form method="post" action="/newsletter/manage/save/">
        <fieldset>
          <legend>Subscription option</legend>
          <input type="checkbox" name="is_subscribed" id="subscription" value="1" title="General Subscription" ${s.newsletter ? 'checked' : ''} />
          <label for="subscription">General Subscription</label>
        </fieldset>
        <button type="submit" class="action save primary" title="Save">Save</button>
      </form>`,
    accountSidebar('/newsletter/manage/'),
  );
}

function contactPage(ctx: Ctx): Html {
  const s = ctx.state;
  return layout(
    s,
    'Contact Us',
    html`<h1 class="page-title">Contact Us</h1>
      <form class="form contact" id="contact-form" method="post" action="/contact/index/post/">
        <fieldset>
          <legend>Write Us</legend>
          <p>Jot us a note and we’ll get back to you as quickly as possible.</p>
          <div class="field">
            <label for="name">Name</label><input name="name" id="name" title="Name" value="${s.customer.firstName} ${s.customer.lastName}" type="text" />
          </div>
          <div class="field"><label for="email">Email</label><input name="email" id="email" title="Email" value="${s.customer.email}" type="email" /></div>
          <div class="field"><label for="telephone">Phone Number</label><input name="telephone" id="telephone" title="Phone Number" type="tel" /></div>
          <div class="field">
            <label for="comment">What’s on your mind?</label><textarea name="comment" id="comment" title="What’s on your mind?" cols="5" rows="3"></textarea>
          </div>
        </fieldset>
        <button type="submit" title="Submit" class="action submit primary">Submit</button>
      </form>`,
  );
}

function notImplementedInfo(ctx: Ctx, title: string): Html {
  return layout(
    ctx.state,
    title,
    html`<h1 class="page-title">${title}</h1>
      <p>This page has no content in this store.</p>`,
  );
}

/** `restAdmin`: the account the REST token endpoint accepts (default the seeded one). */
export function createShoppingApp(base: ShoppingBase, restAdmin?: ShopAdminCredentials): SiteApp<ShoppingState> {
  const router = addRestRoutes(new Router<ShoppingState>(), STOREFRONT_REST, restAdmin)
    .get('/', home)
    .get('/catalogsearch/result', searchResults)
    .get('/catalogsearch/result/index', searchResults)
    .post('/checkout/cart/add', addToCart)
    .post('/checkout/cart/updatePost', updateCart)
    .get('/checkout/cart', cartPage)
    .get('/checkout', checkoutPage)
    .post('/checkout/placeOrder', placeOrder)
    .get('/checkout/onepage/success', successPage)
    .get('/sales/order/history', historyPage)
    .get('/sales/order/view/order_id/:id', orderPage)
    .post('/sales/order/reorder/order_id/:id', reorder)
    .get('/wishlist', wishlistPage)
    .post('/wishlist/index/add', (ctx) => {
      const s = ctx.state;
      const product = s.product(Number(ctx.form.get('product'))) ?? notFound('product');
      if (!s.wishlist.find((w) => w.productId === product.id)) {
        const id = s.wishlist.allocateId();
        s.wishlist.set(id, { id, productId: product.id });
      }
      s.flash = `${product.name} has been added to your Wish List.`;
      return redirect('/wishlist/');
    })
    .post('/wishlist/index/remove', (ctx) => {
      ctx.state.wishlist.delete(Number(ctx.form.get('item')));
      return redirect('/wishlist/');
    })
    .get('/customer/account', accountPage)
    .get('/customer/account/edit', (ctx) => notImplementedInfo(ctx, 'Account Information'))
    .get('/customer/account/logout', (ctx) => notImplementedInfo(ctx, 'Sign Out is disabled in this store'))
    .get('/customer/address', addressBook)
    .get('/customer/address/edit', addressEdit)
    .post('/customer/address/formPost', (ctx) => {
      ctx.state.address = addressFromForm(ctx.form, ctx.state.address);
      ctx.state.flash = 'You saved the address.';
      return redirect('/customer/address/');
    })
    .get('/newsletter/manage', newsletterPage)
    .post('/newsletter/manage/save', (ctx) => {
      ctx.state.newsletter = ctx.form.get('is_subscribed') === '1';
      ctx.state.flash = ctx.state.newsletter ? 'We have saved your subscription.' : 'We have removed your newsletter subscription.';
      return redirect('/customer/account/');
    })
    .get('/contact', contactPage)
    .get('/contact/index', contactPage)
    .post('/contact/index/post', (ctx) => {
      const id = ctx.state.messages.allocateId();
      ctx.state.messages.set(id, { id, name: ctx.form.get('name') ?? '', email: ctx.form.get('email') ?? '', comment: ctx.form.get('comment') ?? '' });
      ctx.state.flash = "Thanks for contacting us with your comments and questions. We'll respond to you very soon.";
      return redirect('/contact/');
    })
    .post('/review/product/post/id/:id', (ctx) => {
      const s = ctx.state;
      const product = s.product(intParam(ctx.params, 'id')) ?? notFound('product');
      const rating = Number(ctx.form.get('rating'));
      const nickname = (ctx.form.get('nickname') ?? '').trim();
      const summary = (ctx.form.get('title') ?? '').trim();
      const text = (ctx.form.get('detail') ?? '').trim();
      if (!(rating >= 1 && rating <= 5) || !nickname || !summary || !text) {
        s.flash = 'Please select one of each of the ratings above and fill in every field.';
        return redirect(`/${product.urlKey}.html`);
      }
      const id = s.reviews.allocateId();
      s.reviews.set(id, { id, productId: product.id, nickname, rating, summary, text, date: s.clock.now().slice(0, 10), status: 'Approved' });
      s.flash = 'You submitted your review.';
      return redirect(`/${product.urlKey}.html`);
    })
    .get('/review/customer', (ctx) => notImplementedInfo(ctx, 'My Product Reviews'))
    .get('/about-us', (ctx) => notImplementedInfo(ctx, 'About us'))
    .get('/customer-service', (ctx) => notImplementedInfo(ctx, 'Customer Service'))
    .get('/privacy-policy', (ctx) => notImplementedInfo(ctx, 'Privacy and Cookie Policy'))
    .get('/search/term/popular', (ctx) => notImplementedInfo(ctx, 'Popular Search Terms'))
    .get('/catalogsearch/advanced', (ctx) => notImplementedInfo(ctx, 'Advanced Search'))
    .get('/sales/guest/form', (ctx) => notImplementedInfo(ctx, 'Orders and Returns'))
    .get('/:page', catchAll)
    .get('/:category/:sub', (ctx) => {
      const sub = ctx.params.sub ?? '';
      if (!sub.endsWith('.html')) notFound(`page ${ctx.path}`);
      return categoryPage(ctx, `${ctx.params.category}/${sub.slice(0, -'.html'.length)}`);
    });
  return {
    name: 'shopping',
    basePath: '',
    freshState: () => new ShoppingState(base),
    router,
    errorPage: (state, status, message) =>
      layout(
        state,
        `Error ${status}`,
        html`<h1 class="page-title">Whoops, our bad...</h1>
          <p>${message}</p>`,
      ),
  };
}
