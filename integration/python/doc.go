// Package python tests the pswap Python package (python/) as a user gets
// it: it builds the linux x86_64 wheel with scripts/wheels.sh, installs it
// into a clean virtual environment with pip install --no-index (no Go on
// PATH, no network: the test dependencies come from the wheel folder of
// scripts/pywheelhouse.sh), checks the installed package with mypy
// --strict, and runs python/tests with pytest against a local folder and,
// with MinIO (scripts/test.sh), against S3. With $PSWAP_ENGINES set
// (scripts/engines.sh), PyIceberg and delta-rs read the tables back.
package python
