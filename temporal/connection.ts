/**
 * Connections to Temporal for clients and workers, from config (address, namespace, TLS settings)
 * and secrets (API key, client certificate): the same code reaches the local dev server, a
 * self-hosted cluster or Temporal Cloud.
 */
import { Client, Connection, type ConnectionOptions } from '@temporalio/client';
import { NativeConnection, type NativeConnectionOptions } from '@temporalio/worker';
import { readFileSync } from 'node:fs';
import type { Config } from '../config/campaignConfig';
import type { Secrets } from '../config/secrets';

type TlsOption = ConnectionOptions['tls'];

function tlsOptions(config: Config, secrets: Secrets): TlsOption {
  const { tls } = config.temporal;
  const { clientCert, clientKey, apiKey } = secrets.temporal;
  // An API key implies TLS (Temporal Cloud); a client certificate implies mTLS.
  if (!tls.enabled && !clientCert && !apiKey) return undefined;
  return {
    ...(tls.serverNameOverride ? { serverNameOverride: tls.serverNameOverride } : {}),
    ...(tls.serverRootCaFile ? { serverRootCACertificate: readFileSync(tls.serverRootCaFile) } : {}),
    ...(clientCert && clientKey ? { clientCertPair: { crt: Buffer.from(clientCert.reveal()), key: Buffer.from(clientKey.reveal()) } } : {}),
  };
}

function connectionOptions(config: Config, secrets: Secrets) {
  const tls = tlsOptions(config, secrets);
  const apiKey = secrets.temporal.apiKey?.reveal();
  return {
    address: config.temporal.address,
    ...(tls ? { tls } : {}),
    ...(apiKey ? { apiKey } : {}),
  };
}

export async function connectClient(config: Config, secrets: Secrets): Promise<Client> {
  const connection = await Connection.connect(connectionOptions(config, secrets) as ConnectionOptions);
  return new Client({ connection, namespace: config.temporal.namespace });
}

export function connectWorker(config: Config, secrets: Secrets): Promise<NativeConnection> {
  return NativeConnection.connect(connectionOptions(config, secrets) as NativeConnectionOptions);
}
