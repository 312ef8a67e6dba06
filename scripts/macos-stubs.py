#!/usr/bin/env python3
"""Writes macOS framework stubs (.tbd) so that cargo-zigbuild can link the macOS libraries.

zig ships libSystem's stub but no Apple SDK, and the dylib links Security and CoreFoundation
(redis tls-rustls -> rustls-native-certs -> security-framework). A text-based stub only has to
tell the linker which library exports which symbol, under the install name the dylib records
(LC_LOAD_DYLIB); macOS resolves them against the real frameworks at load time. The stubs are
written from the symbol names below only; no Apple SDK file is copied.

Usage: python3 scripts/macos-stubs.py OUT_DIR
writes OUT_DIR/Frameworks/{Security,CoreFoundation}.framework/<Name>.tbd for the linker flag
-F OUT_DIR/Frameworks (scripts/build-natives.sh). Files already up to date are left alone.

The symbol lists are every CoreFoundation and Security symbol that the dependencies' objects
import (nm -u), for this Cargo.lock; both architectures import the same set. After a dependency
update, a link error "undefined symbol: _Sec..." means a list is short. Regenerate from the
output of this, after a (failing) macOS build:
  llvm-nm -u --just-symbol-name target/natives-build/aarch64-apple-darwin/dist/deps/*.rlib \\
    | grep -E '^_(k?CF|k?Sec|SSL|Authorization|CMS)' | sed 's/^_//' | sort -u
(CF*, kCF*: CoreFoundation; the rest: Security.) Extra names are harmless; a name in the wrong
framework links but fails to bind at load time, so keep the split by prefix.
"""

import sys
from pathlib import Path

# The arm64 slice matches aarch64-apple-darwin; x86_64 the Intel build.
TARGETS = "[ x86_64-macos, arm64-macos ]"

FRAMEWORKS = {
    "CoreFoundation": """
    CFArrayCreate CFArrayGetCount CFArrayGetValueAtIndex CFAttributedStringCreateMutable
    CFBundleCopyBundleURL CFBundleCopyExecutableURL CFBundleCopyPrivateFrameworksURL
    CFBundleCopyResourcesDirectoryURL CFBundleCopySharedSupportURL CFBundleCreate
    CFBundleGetBundleWithIdentifier CFBundleGetFunctionPointerForName CFBundleGetInfoDictionary
    CFBundleGetMainBundle CFCopyDescription CFDataCreate CFDataGetBytePtr CFDataGetLength
    CFDataGetTypeID CFDateGetAbsoluteTime CFDateGetTypeID CFDictionaryAddValue
    CFDictionaryCreate CFDictionaryCreateMutable CFDictionaryGetCount
    CFDictionaryGetKeysAndValues CFDictionaryGetTypeID CFDictionaryGetValueIfPresent
    CFDictionarySetValue CFEqual CFErrorCopyDescription CFErrorGetCode CFErrorGetDomain
    CFFileDescriptorCreate CFFileDescriptorCreateRunLoopSource CFFileDescriptorDisableCallBacks
    CFFileDescriptorEnableCallBacks CFFileDescriptorGetContext
    CFFileDescriptorGetNativeDescriptor CFFileDescriptorInvalidate CFFileDescriptorIsValid
    CFGetTypeID CFMachPortCreateRunLoopSource CFNumberCreate CFNumberGetValue
    CFPropertyListCreateData CFPropertyListCreateWithData CFRelease CFRetain
    CFRunLoopAddObserver CFRunLoopAddSource CFRunLoopAddTimer CFRunLoopContainsObserver
    CFRunLoopContainsSource CFRunLoopContainsTimer CFRunLoopCopyCurrentMode CFRunLoopGetCurrent
    CFRunLoopGetMain CFRunLoopRemoveObserver CFRunLoopRemoveSource CFRunLoopRemoveTimer
    CFRunLoopRun CFRunLoopRunInMode CFRunLoopStop CFRunLoopTimerCreate CFShow
    CFStringCreateWithBytes CFStringCreateWithBytesNoCopy CFStringGetBytes CFStringGetCStringPtr
    CFStringGetLength CFStringGetTypeID CFTimeZoneCopyDefault CFTimeZoneGetName
    CFTimeZoneGetSecondsFromGMT CFURLCopyAbsoluteURL CFURLCopyFileSystemPath
    CFURLCreateWithFileSystemPath CFURLGetFileSystemRepresentation CFURLGetString CFUUIDCreate
    kCFAllocatorDefault kCFAllocatorNull kCFBooleanFalse kCFBooleanTrue kCFTypeArrayCallBacks
    kCFTypeDictionaryKeyCallBacks kCFTypeDictionaryValueCallBacks
""",
    "Security": """
    AuthorizationCreate AuthorizationCreateFromExternalForm AuthorizationExecuteWithPrivileges
    AuthorizationMakeExternalForm CMSDecoderCopyAllCerts CMSDecoderCopyContent
    CMSDecoderCopyDetachedContent CMSDecoderCopySignerEmailAddress
    CMSDecoderCopySignerSigningTime CMSDecoderCopySignerStatus CMSDecoderCopySignerTimestamp
    CMSDecoderCopySignerTimestampCertificates CMSDecoderCopySignerTimestampWithPolicy
    CMSDecoderCreate CMSDecoderFinalizeMessage CMSDecoderGetNumSigners
    CMSDecoderIsContentEncrypted CMSDecoderSetDetachedContent CMSDecoderUpdateMessage
    CMSEncodeContent CMSEncoderAddRecipients CMSEncoderAddSignedAttributes CMSEncoderAddSigners
    CMSEncoderAddSupportingCerts CMSEncoderCopyEncapsulatedContentType
    CMSEncoderCopyEncodedContent CMSEncoderCopyRecipients CMSEncoderCopySignerTimestamp
    CMSEncoderCopySignerTimestampWithPolicy CMSEncoderCopySigners CMSEncoderCopySupportingCerts
    CMSEncoderCreate CMSEncoderGetCertificateChainMode CMSEncoderGetHasDetachedContent
    CMSEncoderSetCertificateChainMode CMSEncoderSetEncapsulatedContentTypeOID
    CMSEncoderSetHasDetachedContent CMSEncoderSetSignerAlgorithm CMSEncoderUpdateContent
    SSLCopyALPNProtocols SSLCopyCertificateAuthorities SSLCopyPeerTrust SSLCreateContext
    SSLGetDiffieHellmanParams SSLGetEnabledCiphers SSLGetNumberEnabledCiphers
    SSLGetNumberSupportedCiphers SSLGetPeerDomainName SSLGetPeerDomainNameLength SSLGetPeerID
    SSLGetSessionState SSLGetSupportedCiphers SSLSetCertificate SSLSetCertificateAuthorities
    SSLSetDiffieHellmanParams SSLSetEnabledCiphers SSLSetProtocolVersionMax
    SSLSetProtocolVersionMin SSLSetSessionTicketsEnabled SecAccessControlCreateWithFlags
    SecCertificateAddToKeychain SecCertificateCopyCommonName SecCertificateCopyData
    SecCertificateCopyEmailAddresses SecCertificateCopyKey
    SecCertificateCopyNormalizedIssuerSequence SecCertificateCopyNormalizedSubjectSequence
    SecCertificateCopySerialNumberData SecCertificateCopySubjectSummary SecCertificateCopyValues
    SecCertificateCreateWithData SecCertificateGetTypeID SecCodeCheckValidity
    SecCodeCopyGuestWithAttributes SecCodeCopyPath SecCodeCopySelf SecCopyErrorMessageString
    SecDecryptTransformCreate SecDigestTransformCreate SecEncryptTransformCreate
    SecIdentityCopyCertificate SecIdentityCopyPrivateKey SecIdentityCreateWithCertificate
    SecIdentityGetTypeID SecItemAdd SecItemCopyMatching SecItemDelete SecItemImport
    SecItemUpdate SecKeyCopyAttributes SecKeyCopyExternalRepresentation
    SecKeyCopyKeyExchangeResult SecKeyCopyPublicKey SecKeyCreateDecryptedData
    SecKeyCreateEncryptedData SecKeyCreateFromData SecKeyCreateRandomKey SecKeyCreateSignature
    SecKeyGetTypeID SecKeyVerifySignature SecKeychainAddGenericPassword
    SecKeychainAddInternetPassword SecKeychainCopyDefault SecKeychainCopyDomainDefault
    SecKeychainFindGenericPassword SecKeychainFindInternetPassword
    SecKeychainGetUserInteractionAllowed SecKeychainItemFreeContent SecKeychainItemGetTypeID
    SecKeychainItemModifyAttributesAndData SecKeychainSetUserInteractionAllowed
    SecKeychainUnlock SecPKCS12Import SecPolicyCreateBasicX509 SecPolicyCreateRevocation
    SecPolicyCreateSSL SecRandomCopyBytes SecRequirementCreateWithString
    SecStaticCodeCheckValidity SecStaticCodeCreateWithPath SecTransformExecute
    SecTransformSetAttribute SecTrustCopyAnchorCertificates SecTrustCopyPublicKey
    SecTrustCreateWithCertificates SecTrustEvaluate SecTrustEvaluateWithError
    SecTrustGetCertificateAtIndex SecTrustGetCertificateCount SecTrustGetNetworkFetchAllowed
    SecTrustSetAnchorCertificates SecTrustSettingsCopyCertificates
    SecTrustSettingsCopyTrustSettings SecTrustSettingsSetTrustSettings kSecAttrAccessControl
    kSecAttrAccessGroup kSecAttrAccessibleAfterFirstUnlock
    kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
    kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly kSecAttrAccessibleWhenUnlocked
    kSecAttrAccessibleWhenUnlockedThisDeviceOnly kSecAttrAccount kSecAttrApplicationLabel
    kSecAttrAuthenticationType kSecAttrComment kSecAttrDescription kSecAttrIsPermanent
    kSecAttrKeyClass kSecAttrKeySizeInBits kSecAttrKeyType kSecAttrKeyTypeAES kSecAttrKeyTypeEC
    kSecAttrKeyTypeECSECPrimeRandom kSecAttrKeyTypeRSA kSecAttrLabel kSecAttrPath kSecAttrPort
    kSecAttrProtocol kSecAttrPublicKeyHash kSecAttrSecurityDomain kSecAttrSerialNumber
    kSecAttrServer kSecAttrService kSecAttrSynchronizable kSecAttrSynchronizableAny
    kSecAttrTokenID kSecAttrTokenIDSecureEnclave kSecClass kSecClassCertificate
    kSecClassGenericPassword kSecClassInternetPassword kSecClassKey kSecDigestHMACKeyAttribute
    kSecDigestSHA2 kSecEncryptionMode kSecGuestAttributeAudit kSecGuestAttributePid kSecIVKey
    kSecImportExportAccess kSecImportExportKeychain kSecImportExportPassphrase
    kSecImportItemCertChain kSecImportItemIdentity kSecImportItemKeyID kSecImportItemLabel
    kSecImportItemTrust kSecKeyAlgorithmECDHKeyExchangeCofactor
    kSecKeyAlgorithmECDHKeyExchangeCofactorX963SHA1
    kSecKeyAlgorithmECDHKeyExchangeCofactorX963SHA224
    kSecKeyAlgorithmECDHKeyExchangeCofactorX963SHA256
    kSecKeyAlgorithmECDHKeyExchangeCofactorX963SHA384
    kSecKeyAlgorithmECDHKeyExchangeCofactorX963SHA512 kSecKeyAlgorithmECDHKeyExchangeStandard
    kSecKeyAlgorithmECDHKeyExchangeStandardX963SHA1
    kSecKeyAlgorithmECDHKeyExchangeStandardX963SHA224
    kSecKeyAlgorithmECDHKeyExchangeStandardX963SHA256
    kSecKeyAlgorithmECDHKeyExchangeStandardX963SHA384
    kSecKeyAlgorithmECDHKeyExchangeStandardX963SHA512 kSecKeyAlgorithmECDSASignatureDigestX962
    kSecKeyAlgorithmECDSASignatureDigestX962SHA1 kSecKeyAlgorithmECDSASignatureDigestX962SHA224
    kSecKeyAlgorithmECDSASignatureDigestX962SHA256
    kSecKeyAlgorithmECDSASignatureDigestX962SHA384
    kSecKeyAlgorithmECDSASignatureDigestX962SHA512 kSecKeyAlgorithmECDSASignatureMessageX962SHA1
    kSecKeyAlgorithmECDSASignatureMessageX962SHA224
    kSecKeyAlgorithmECDSASignatureMessageX962SHA256
    kSecKeyAlgorithmECDSASignatureMessageX962SHA384
    kSecKeyAlgorithmECDSASignatureMessageX962SHA512 kSecKeyAlgorithmECDSASignatureRFC4754
    kSecKeyAlgorithmECIESEncryptionCofactorVariableIVX963SHA224AESGCM
    kSecKeyAlgorithmECIESEncryptionCofactorVariableIVX963SHA256AESGCM
    kSecKeyAlgorithmECIESEncryptionCofactorVariableIVX963SHA384AESGCM
    kSecKeyAlgorithmECIESEncryptionCofactorVariableIVX963SHA512AESGCM
    kSecKeyAlgorithmECIESEncryptionCofactorX963SHA1AESGCM
    kSecKeyAlgorithmECIESEncryptionCofactorX963SHA224AESGCM
    kSecKeyAlgorithmECIESEncryptionCofactorX963SHA256AESGCM
    kSecKeyAlgorithmECIESEncryptionCofactorX963SHA384AESGCM
    kSecKeyAlgorithmECIESEncryptionCofactorX963SHA512AESGCM
    kSecKeyAlgorithmECIESEncryptionStandardVariableIVX963SHA224AESGCM
    kSecKeyAlgorithmECIESEncryptionStandardVariableIVX963SHA256AESGCM
    kSecKeyAlgorithmECIESEncryptionStandardVariableIVX963SHA384AESGCM
    kSecKeyAlgorithmECIESEncryptionStandardVariableIVX963SHA512AESGCM
    kSecKeyAlgorithmECIESEncryptionStandardX963SHA1AESGCM
    kSecKeyAlgorithmECIESEncryptionStandardX963SHA224AESGCM
    kSecKeyAlgorithmECIESEncryptionStandardX963SHA256AESGCM
    kSecKeyAlgorithmECIESEncryptionStandardX963SHA384AESGCM
    kSecKeyAlgorithmECIESEncryptionStandardX963SHA512AESGCM
    kSecKeyAlgorithmRSAEncryptionOAEPSHA1 kSecKeyAlgorithmRSAEncryptionOAEPSHA1AESGCM
    kSecKeyAlgorithmRSAEncryptionOAEPSHA224 kSecKeyAlgorithmRSAEncryptionOAEPSHA224AESGCM
    kSecKeyAlgorithmRSAEncryptionOAEPSHA256 kSecKeyAlgorithmRSAEncryptionOAEPSHA256AESGCM
    kSecKeyAlgorithmRSAEncryptionOAEPSHA384 kSecKeyAlgorithmRSAEncryptionOAEPSHA384AESGCM
    kSecKeyAlgorithmRSAEncryptionOAEPSHA512 kSecKeyAlgorithmRSAEncryptionOAEPSHA512AESGCM
    kSecKeyAlgorithmRSAEncryptionPKCS1 kSecKeyAlgorithmRSAEncryptionRaw
    kSecKeyAlgorithmRSASignatureDigestPKCS1v15Raw kSecKeyAlgorithmRSASignatureDigestPKCS1v15SHA1
    kSecKeyAlgorithmRSASignatureDigestPKCS1v15SHA224
    kSecKeyAlgorithmRSASignatureDigestPKCS1v15SHA256
    kSecKeyAlgorithmRSASignatureDigestPKCS1v15SHA384
    kSecKeyAlgorithmRSASignatureDigestPKCS1v15SHA512 kSecKeyAlgorithmRSASignatureDigestPSSSHA1
    kSecKeyAlgorithmRSASignatureDigestPSSSHA224 kSecKeyAlgorithmRSASignatureDigestPSSSHA256
    kSecKeyAlgorithmRSASignatureDigestPSSSHA384 kSecKeyAlgorithmRSASignatureDigestPSSSHA512
    kSecKeyAlgorithmRSASignatureMessagePKCS1v15SHA1
    kSecKeyAlgorithmRSASignatureMessagePKCS1v15SHA224
    kSecKeyAlgorithmRSASignatureMessagePKCS1v15SHA256
    kSecKeyAlgorithmRSASignatureMessagePKCS1v15SHA384
    kSecKeyAlgorithmRSASignatureMessagePKCS1v15SHA512 kSecKeyAlgorithmRSASignatureMessagePSSSHA1
    kSecKeyAlgorithmRSASignatureMessagePSSSHA224 kSecKeyAlgorithmRSASignatureMessagePSSSHA256
    kSecKeyAlgorithmRSASignatureMessagePSSSHA384 kSecKeyAlgorithmRSASignatureMessagePSSSHA512
    kSecKeyAlgorithmRSASignatureRaw kSecKeyKeyExchangeParameterRequestedSize
    kSecKeyKeyExchangeParameterSharedInfo kSecMatchCaseInsensitive kSecMatchLimit
    kSecMatchLimitAll kSecMatchSearchList kSecMatchSubjectWholeString kSecMatchTrustedOnly
    kSecPaddingKey kSecPrivateKeyAttrs kSecPropertyKeyLabel kSecPropertyKeyType
    kSecPropertyKeyValue kSecPropertyTypeSection kSecPropertyTypeString kSecPublicKeyAttrs
    kSecReturnAttributes kSecReturnData kSecReturnRef kSecTransformInputAttributeName
    kSecUseAuthenticationContext kSecUseAuthenticationUI kSecUseAuthenticationUISkip
    kSecUseKeychain kSecValueData kSecValueRef
""",
}


def tbd(name: str, symbols: list) -> str:
    # C names get Mach-O's leading underscore.
    listed = ",\n".join(f"                     _{s}" for s in symbols).lstrip()
    return (
        "--- !tapi-tbd\n"
        "tbd-version:     4\n"
        f"targets:         {TARGETS}\n"
        f"install-name:    '/System/Library/Frameworks/{name}.framework/Versions/A/{name}'\n"
        "exports:\n"
        f"  - targets:         {TARGETS}\n"
        f"    symbols:         [ {listed} ]\n"
        "...\n"
    )


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: macos-stubs.py OUT_DIR", file=sys.stderr)
        return 64
    root = Path(sys.argv[1]) / "Frameworks"
    for name, names in FRAMEWORKS.items():
        path = root / f"{name}.framework" / f"{name}.tbd"
        text = tbd(name, sorted(set(names.split())))
        if path.is_file() and path.read_text() == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        # Write then rename, so an interrupted run never leaves a truncated stub behind.
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
