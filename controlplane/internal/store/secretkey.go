package store

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// ErrWrongSecretKey means the replica's VANTAGE_SECRET_KEY is not the key the database's secrets
// are sealed with (CheckSecretKey).
var ErrWrongSecretKey = errors.New("wrong VANTAGE_SECRET_KEY")

// CheckSecretKey compares the fingerprint of the replica's key (current, and previous while a
// rotation runs) with the database's, at start-up. The first replica to start records its
// key; a database sealed before fingerprints existed is checked by opening one of its sealed
// values instead. A key the database does not know is ErrWrongSecretKey, with a message that
// says what to do: a replica with the wrong key would otherwise fail to open every secret.
func (s *Store) CheckSecretKey(ctx context.Context, current string, previous []string) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		stored, err := q.SecretKeyFingerprint(ctx)
		if err != nil {
			return err
		}
		if len(stored) == 0 {
			sample, err := q.SampleSealedValue(ctx)
			if err != nil {
				return err
			}
			if len(sample) > 0 {
				if _, err := s.sealer.Open(sample[0]); err != nil {
					return fmt.Errorf("%w: the stored secrets cannot be opened with this replica's key (fingerprint %s); "+
						"start it with the key the other replicas use", ErrWrongSecretKey, current)
				}
			}
			return q.InitSecretKeyFingerprint(ctx, dbsqlc.InitSecretKeyFingerprintParams{Fingerprint: current, Now: s.now()})
		}
		if stored[0] == current || slices.Contains(previous, stored[0]) {
			return nil
		}
		return fmt.Errorf("%w: the database's secrets are sealed with the key of fingerprint %s, and this replica's "+
			"VANTAGE_SECRET_KEY has fingerprint %s (previous keys: %v). Start every replica with the same key; to "+
			"rotate it, give the new key as VANTAGE_SECRET_KEY and the old one in VANTAGE_SECRET_KEY_PREVIOUS, then run "+
			"`vantage-controlplane admin reencrypt-secrets`", ErrWrongSecretKey, stored[0], current, previous)
	})
}

// ReencryptSecrets opens every sealed value (with whichever key of the keyring sealed it) and
// seals it again under the current key, then records that key as the database's, all in one
// transaction. It returns how many values were re-sealed.
func (s *Store) ReencryptSecrets(ctx context.Context) (int, error) {
	current := s.sealer.Fingerprint()
	var n int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		n = 0
		q := s.q.WithTx(tx)
		reseal := func(what string, sealed []byte) ([]byte, error) {
			if sealed == nil {
				return nil, nil
			}
			pt, err := s.sealer.Open(sealed)
			if err != nil {
				return nil, fmt.Errorf("%s: %w (is the key it was sealed with in VANTAGE_SECRET_KEY_PREVIOUS?)", what, err)
			}
			n++
			return s.sealer.Seal(pt)
		}
		envs, err := q.SealedEnvValues(ctx)
		if err != nil {
			return err
		}
		for _, r := range envs {
			v, err := reseal("environment variable "+r.ID.String(), r.ValueEnc)
			if err != nil {
				return err
			}
			if err := q.ResealEnvValue(ctx, dbsqlc.ResealEnvValueParams{ID: r.ID, ValueEnc: v}); err != nil {
				return err
			}
		}
		checks, err := q.SealedCheckPasswords(ctx)
		if err != nil {
			return err
		}
		for _, r := range checks {
			v, err := reseal("check password "+r.ID.String(), r.AuthPasswordEnc)
			if err != nil {
				return err
			}
			if err := q.ResealCheckPassword(ctx, dbsqlc.ResealCheckPasswordParams{ID: r.ID, AuthPasswordEnc: v}); err != nil {
				return err
			}
		}
		hooks, err := q.SealedWebhookSecrets(ctx)
		if err != nil {
			return err
		}
		for _, r := range hooks {
			v, err := reseal("webhook secret "+r.ID.String(), r.SecretEnc)
			if err != nil {
				return err
			}
			if err := q.ResealWebhookSecret(ctx, dbsqlc.ResealWebhookSecretParams{ID: r.ID, SecretEnc: v}); err != nil {
				return err
			}
		}
		invs, err := q.SealedInvitationTokens(ctx)
		if err != nil {
			return err
		}
		for _, r := range invs {
			v, err := reseal("invitation "+r.ID.String(), r.TokenEnc)
			if err != nil {
				return err
			}
			if err := q.ResealInvitationToken(ctx, dbsqlc.ResealInvitationTokenParams{ID: r.ID, TokenEnc: v}); err != nil {
				return err
			}
		}
		integrations, err := q.SealedIntegrationSettings(ctx)
		if err != nil {
			return err
		}
		for _, r := range integrations {
			v, err := reseal("integration "+r.ID.String(), r.SettingsEnc)
			if err != nil {
				return err
			}
			if err := q.ResealIntegrationSettings(ctx, dbsqlc.ResealIntegrationSettingsParams{ID: r.ID, SettingsEnc: v}); err != nil {
				return err
			}
		}
		badges, err := q.SealedBadgeTokens(ctx)
		if err != nil {
			return err
		}
		for _, r := range badges {
			v, err := reseal("badge of check "+r.CheckID.String(), r.TokenEnc)
			if err != nil {
				return err
			}
			if err := q.ResealBadgeToken(ctx, dbsqlc.ResealBadgeTokenParams{CheckID: r.CheckID, TokenEnc: v}); err != nil {
				return err
			}
		}
		subs, err := q.SealedSubscriberTokens(ctx)
		if err != nil {
			return err
		}
		for _, r := range subs {
			conf, err := reseal("subscriber "+r.ID.String(), r.ConfirmationTokenEnc)
			if err != nil {
				return err
			}
			unsub, err := reseal("subscriber "+r.ID.String(), r.UnsubscribeTokenEnc)
			if err != nil {
				return err
			}
			if err := q.ResealSubscriberTokens(ctx, dbsqlc.ResealSubscriberTokensParams{ID: r.ID, ConfirmationTokenEnc: conf,
				UnsubscribeTokenEnc: unsub}); err != nil {
				return err
			}
		}
		if err := q.InitSecretKeyFingerprint(ctx, dbsqlc.InitSecretKeyFingerprintParams{Fingerprint: current, Now: s.now()}); err != nil {
			return err
		}
		return q.SetSecretKeyFingerprint(ctx, dbsqlc.SetSecretKeyFingerprintParams{Fingerprint: current, Now: s.now()})
	})
	return n, err
}
