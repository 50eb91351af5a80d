/** The admission server's certificate and key, as PEM. */
export interface ServingPair {
  certPem: string;
  keyPem: string;
}

/**
 * Where the admission HTTPS server gets its certificate, and the webhook configurations
 * their caBundle: generated and kept in a Secret (SecretServingCertificates), or read from
 * a mounted folder (DirectoryServingCertificates).
 */
export interface ServingCertificates {
  /** The current pair; undefined until one is loaded. */
  current(): ServingPair | undefined;
  /** PEM CA bundle for the webhook configurations' caBundle; undefined: leave caBundle alone (cert-manager). */
  caBundle(): string | undefined;
  /** Called whenever current() or caBundle() changes. Returns unsubscribe. */
  onChange(listener: () => void): () => void;
  /** Resolves once a pair is loaded, or after a bounded wait (then it logs and keeps trying). */
  start(): Promise<void>;
  close(): Promise<void>;
}
