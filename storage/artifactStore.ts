/**
 * The artifact store: every byte a campaign produces (checkpoints, traces, task sets, manifests) goes
 * through here to S3-compatible storage. Large objects stream through multipart uploads; JSONL streams
 * line by line both ways. Publishing is data first, manifest last, and a manifest is written at most
 * once (conditional put), so readers that trust manifests never see half a result.
 */
import {
  CreateBucketCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  AbortMultipartUploadCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { PassThrough, Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3Config } from './settings';
import { neverStore, type S3Credentials } from '../config/secrets';
import { scrubSecretValuesIn } from './scrub';
import { classifyStorageError, StorageNotFoundError, StoragePermanentError, type StorageTarget } from './errors';

export interface ObjectInfo {
  key: string;
  bytes: number;
  sha256: string;
}

export interface JsonlInfo extends ObjectInfo {
  lines: number;
}

/** A published unit of work: the data objects it stands for, plus small metadata. */
export interface Manifest<T = unknown> {
  schema: 'webrl.manifest/1';
  objects: ObjectInfo[];
  data: T;
}

export type ProgressListener = (bytesDone: number) => void;

export interface TransferOptions {
  onProgress?: ProgressListener;
  /** Multipart part size; S3's minimum is 5 MiB. */
  partSize?: number;
  contentType?: string;
}

const DEFAULT_PART_SIZE = 8 * 1024 * 1024;

/** Counts and hashes bytes as they stream past, so checksums cost no second read. */
class DigestingStream extends Transform {
  readonly hash = createHash('sha256');
  bytes = 0;
  constructor(private readonly onProgress?: ProgressListener) {
    super();
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null, data?: Buffer) => void) {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    this.onProgress?.(this.bytes);
    done(null, chunk);
  }
  digest(): string {
    return this.hash.digest('hex');
  }
}

export class ArtifactStore {
  readonly client: S3Client;
  readonly bucket: string;
  readonly prefix: string;
  readonly target: StorageTarget;

  constructor(config: S3Config, credentials?: S3Credentials) {
    this.bucket = config.bucket;
    this.prefix = config.prefix;
    this.target = { endpoint: config.endpoint, bucket: config.bucket };
    if (credentials) neverStore(credentials.accessKeyId, credentials.secretAccessKey, credentials.sessionToken);
    this.client = new S3Client({
      region: config.region,
      forcePathStyle: config.forcePathStyle,
      maxAttempts: config.maxAttempts,
      retryMode: 'standard',
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 120_000 },
      endpoint: config.endpoint,
      ...(credentials
        ? {
            credentials: {
              accessKeyId: credentials.accessKeyId.reveal(),
              secretAccessKey: credentials.secretAccessKey.reveal(),
              ...(credentials.sessionToken ? { sessionToken: credentials.sessionToken.reveal() } : {}),
            },
          }
        : {}),
    });
  }

  private fullKey(key: string): string {
    return `${this.prefix}${key}`;
  }

  private async call<T>(operation: string, key: string | undefined, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw classifyStorageError(error, this.target, operation, key);
    }
  }

  /** Checks that the bucket is reachable with these credentials: fails fast and loudly if not. */
  async checkAccess(): Promise<void> {
    await this.call('HeadBucket', undefined, () => this.client.send(new HeadBucketCommand({ Bucket: this.bucket })));
  }

  /** Creates the bucket if missing (local stack, tests); on real S3 buckets are made by operators. */
  async ensureBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      return;
    } catch (error) {
      const classified = classifyStorageError(error, this.target, 'HeadBucket');
      if (!(classified instanceof StorageNotFoundError) && !/does not exist/.test(classified.message)) throw classified;
    }
    await this.call('CreateBucket', undefined, async () => {
      try {
        await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
      } catch (error) {
        if ((error as { name?: string }).name !== 'BucketAlreadyOwnedByYou') throw error;
      }
    });
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.head(key);
      return true;
    } catch (error) {
      if (error instanceof StorageNotFoundError) return false;
      throw error;
    }
  }

  async head(key: string): Promise<{ bytes: number; etag?: string }> {
    const out = await this.call('HeadObject', key, () => this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key) })));
    return { bytes: out.ContentLength ?? 0, ...(out.ETag ? { etag: out.ETag } : {}) };
  }

  /** Lists keys (relative to the store prefix) under `prefix`, page by page. */
  async *list(prefix: string): AsyncGenerator<{ key: string; bytes: number }> {
    let token: string | undefined;
    do {
      const page = await this.call('ListObjectsV2', prefix, () =>
        this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.fullKey(prefix), ContinuationToken: token })),
      );
      for (const item of page.Contents ?? []) {
        if (item.Key) yield { key: item.Key.slice(this.prefix.length), bytes: item.Size ?? 0 };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async putBytes(key: string, body: Buffer | string, contentType = 'application/octet-stream'): Promise<ObjectInfo> {
    const buffer = typeof body === 'string' ? Buffer.from(body) : body;
    await this.call('PutObject', key, () =>
      this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key), Body: buffer, ContentType: contentType })),
    );
    return { key, bytes: buffer.length, sha256: createHash('sha256').update(buffer).digest('hex') };
  }

  /** Stores `value` as JSON, without any secret value this process knows (storage/scrub.ts). */
  async putJson(key: string, value: unknown): Promise<ObjectInfo> {
    return this.putBytes(key, `${JSON.stringify(scrubSecretValuesIn(value), null, 2)}\n`, 'application/json');
  }

  async getBytes(key: string): Promise<Buffer> {
    const out = await this.call('GetObject', key, () => this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key) })));
    return Buffer.from(await out.Body!.transformToByteArray());
  }

  async getJson<T = unknown>(key: string): Promise<T> {
    const bytes = await this.getBytes(key);
    try {
      return JSON.parse(bytes.toString('utf8')) as T;
    } catch (error) {
      throw new StoragePermanentError(`object ${key} in bucket '${this.bucket}' is not valid JSON: ${(error as Error).message}`);
    }
  }

  /** Like getJson, but a missing object is `undefined` rather than an error. */
  async tryGetJson<T = unknown>(key: string): Promise<T | undefined> {
    try {
      return await this.getJson<T>(key);
    } catch (error) {
      if (error instanceof StorageNotFoundError) return undefined;
      throw error;
    }
  }

  /** A readable stream of the object's bytes. */
  async openRead(key: string): Promise<Readable> {
    const out = await this.call('GetObject', key, () => this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key) })));
    return out.Body as Readable;
  }

  /** Streams `source` to `key` by multipart upload, hashing on the way. */
  async uploadStream(key: string, source: Readable, options: TransferOptions = {}): Promise<ObjectInfo> {
    const digest = new DigestingStream(options.onProgress);
    const body = source.pipe(digest);
    source.on('error', (error) => digest.destroy(error));
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.bucket,
        Key: this.fullKey(key),
        Body: body,
        ContentType: options.contentType ?? 'application/octet-stream',
      },
      partSize: options.partSize ?? DEFAULT_PART_SIZE,
      queueSize: 4,
      leavePartsOnError: false,
    });
    await this.call('MultipartUpload', key, () => upload.done());
    return { key, bytes: digest.bytes, sha256: digest.digest() };
  }

  async uploadFile(key: string, localPath: string, options: TransferOptions = {}): Promise<ObjectInfo> {
    return this.uploadStream(key, createReadStream(localPath, { highWaterMark: 1024 * 1024 }), options);
  }

  /** Downloads to `localPath` (via a temporary name, renamed when complete) and returns its checksum. */
  async downloadFile(key: string, localPath: string, options: TransferOptions = {}): Promise<ObjectInfo> {
    await mkdir(dirname(localPath), { recursive: true });
    const digest = new DigestingStream(options.onProgress);
    const partial = `${localPath}.partial`;
    await this.call('GetObject', key, async () => {
      const source = await this.openRead(key);
      await pipeline(source, digest, createWriteStream(partial));
    });
    await rename(partial, localPath);
    return { key, bytes: digest.bytes, sha256: digest.digest() };
  }

  /** Checksums an object by streaming it, without keeping it anywhere. */
  async checksum(key: string, options: TransferOptions = {}): Promise<ObjectInfo> {
    const digest = new DigestingStream(options.onProgress);
    await this.call('GetObject', key, async () => {
      const source = await this.openRead(key);
      await pipeline(source, digest, async (hashed: AsyncIterable<Buffer>) => {
        for await (const _chunk of hashed);
      });
    });
    return { key, bytes: digest.bytes, sha256: digest.digest() };
  }

  /** Writes rows as JSON lines, streaming (memory stays flat however many rows there are), without any secret value this process knows. */
  async writeJsonl(key: string, rows: Iterable<unknown> | AsyncIterable<unknown>, options: TransferOptions = {}): Promise<JsonlInfo> {
    const lines = new PassThrough();
    let count = 0;
    const feeding = (async () => {
      try {
        for await (const row of rows as AsyncIterable<unknown>) {
          count += 1;
          if (!lines.write(`${JSON.stringify(scrubSecretValuesIn(row))}\n`)) await new Promise((resolve) => lines.once('drain', resolve));
        }
        lines.end();
      } catch (error) {
        lines.destroy(error as Error);
        throw error;
      }
    })();
    const [info] = await Promise.all([this.uploadStream(key, lines, { ...options, contentType: 'application/x-ndjson' }), feeding]);
    return { ...info, lines: count };
  }

  /** Reads JSON lines one at a time; a malformed line is an error naming the key and line number. */
  async *readJsonl<T = unknown>(key: string): AsyncGenerator<T> {
    const source = await this.openRead(key);
    const reader = createInterface({ input: source, crlfDelay: Infinity });
    let lineNumber = 0;
    for await (const line of reader) {
      lineNumber += 1;
      if (!line.trim()) continue;
      try {
        yield JSON.parse(line) as T;
      } catch (error) {
        throw new StoragePermanentError(`${key} line ${lineNumber} is not valid JSON: ${(error as Error).message}`);
      }
    }
  }

  /** Aborts multipart uploads of `key` left behind by a killed process, so no orphan parts linger. */
  async abortStaleUploads(key: string): Promise<number> {
    const full = this.fullKey(key);
    const listing = await this.call('ListMultipartUploads', key, () =>
      this.client.send(new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: full })),
    );
    const stale = (listing.Uploads ?? []).filter((u) => u.Key === full && u.UploadId);
    for (const upload of stale) {
      await this.call('AbortMultipartUpload', key, () =>
        this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: full, UploadId: upload.UploadId })),
      );
    }
    return stale.length;
  }

  async readManifest<T = unknown>(key: string): Promise<Manifest<T> | undefined> {
    return this.tryGetJson<Manifest<T>>(key);
  }

  /**
   * Writes `body` unless the key already holds an object (If-None-Match: *), atomically: of several
   * writers racing, exactly one creates it and every other gets the stored bytes back.
   */
  async putBytesOnce(key: string, body: Buffer | string, contentType = 'application/octet-stream'): Promise<{ created: boolean; stored: Buffer }> {
    const buffer = typeof body === 'string' ? Buffer.from(body) : body;
    try {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key), Body: buffer, ContentType: contentType, IfNoneMatch: '*' }));
      return { created: true, stored: buffer };
    } catch (error) {
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 412 || (error as { name?: string }).name === 'PreconditionFailed') {
        return { created: false, stored: await this.getBytes(key) };
      }
      throw classifyStorageError(error, this.target, 'PutObject (if absent)', key);
    }
  }

  /**
   * Publishes a manifest after checking that every object it lists is stored with the listed size.
   * The put is conditional: a manifest is written once, and a second publisher (a retried activity
   * that raced a finished one) gets the first manifest back.
   */
  async publishManifest<T>(key: string, objects: ObjectInfo[], data: T): Promise<Manifest<T>> {
    for (const object of objects) {
      const { bytes } = await this.head(object.key);
      if (bytes !== object.bytes) {
        throw new StoragePermanentError(`cannot publish ${key}: ${object.key} has ${bytes} bytes, the manifest says ${object.bytes}`);
      }
    }
    const manifest: Manifest<T> = { schema: 'webrl.manifest/1', objects, data };
    const { created, stored } = await this.putBytesOnce(key, `${JSON.stringify(manifest, null, 2)}\n`, 'application/json');
    return created ? manifest : (JSON.parse(stored.toString('utf8')) as Manifest<T>);
  }

  destroy(): void {
    this.client.destroy();
  }
}
