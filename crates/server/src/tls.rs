//! The server certificate: the configured PEM files, or a self-signed certificate for
//! `localhost` and `127.0.0.1`, created once beside the SQLite file (or in the working directory
//! for PostgreSQL) and reused on later starts.

use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

pub fn server_config(
    cert: Option<&Path>,
    key: Option<&Path>,
    self_signed_dir: &Path,
) -> anyhow::Result<rustls::ServerConfig> {
    // Idempotent; an Err only says a provider is already installed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (cert, key) = match (cert, key) {
        (Some(cert), Some(key)) => (cert.to_path_buf(), key.to_path_buf()),
        (None, None) => self_signed(self_signed_dir)?,
        // Half a configuration is a mistake to report, not a reason to serve another identity.
        (Some(cert), None) => {
            return Err(anyhow!(
                "ROASTERY_TLS_CERT is set ({}) but ROASTERY_TLS_KEY is not; set both, or neither \
                 for a self-signed certificate",
                cert.display()
            ));
        }
        (None, Some(key)) => {
            return Err(anyhow!(
                "ROASTERY_TLS_KEY is set ({}) but ROASTERY_TLS_CERT is not; set both, or neither \
                 for a self-signed certificate",
                key.display()
            ));
        }
    };
    let chain = CertificateDer::pem_file_iter(&cert)
        .with_context(|| format!("reading certificate {}", cert.display()))?
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("parsing certificate {}", cert.display()))?;
    let key = PrivateKeyDer::from_pem_file(&key)
        .with_context(|| format!("reading private key {}", key.display()))?;
    rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .context("the certificate does not match its key")
}

fn self_signed(dir: &Path) -> anyhow::Result<(PathBuf, PathBuf)> {
    let cert = dir.join("roastery-cert.pem");
    let key = dir.join("roastery-key.pem");
    if cert.exists() && key.exists() {
        return Ok((cert, key));
    }
    let generated =
        rcgen::generate_simple_self_signed(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .map_err(|e| anyhow!("generating a self-signed certificate: {e}"))?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    write_private(&key, generated.signing_key.serialize_pem().as_bytes())?;
    std::fs::write(&cert, generated.cert.pem())
        .with_context(|| format!("writing {}", cert.display()))?;
    tracing::warn!(
        certificate = %cert.display(),
        "no TLS certificate configured; created a self-signed one for localhost"
    );
    Ok((cert, key))
}

fn write_private(path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    file.write_all(contents)
        .with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_self_signed_certificate_is_created_once_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        server_config(None, None, dir.path()).unwrap();
        let first = std::fs::read(dir.path().join("roastery-cert.pem")).unwrap();
        server_config(None, None, dir.path()).unwrap();
        let second = std::fs::read(dir.path().join("roastery-cert.pem")).unwrap();
        assert_eq!(first, second);
    }

    #[test]
    fn a_certificate_without_its_key_or_a_key_without_its_certificate_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let cert = dir.path().join("cert.pem");
        let refused = server_config(Some(&cert), None, dir.path()).unwrap_err();
        assert!(
            refused.to_string().contains("ROASTERY_TLS_KEY is not"),
            "{refused}"
        );
        let refused = server_config(None, Some(&cert), dir.path()).unwrap_err();
        assert!(
            refused.to_string().contains("ROASTERY_TLS_CERT is not"),
            "{refused}"
        );
        // Nothing was generated in their place.
        assert!(!dir.path().join("roastery-cert.pem").exists());
    }
}
